-- A Gold job in Flink SQL: bin/changeflow gold examples/gold_branches.sql [--bounded]
-- Silver: silver.accounts (aid key, bid, balance) and silver.branches (bid key, name), any
-- Iceberg v2 tables with identifier fields (e.g. written by bin/changeflow ingest).
SET 'table.exec.state.ttl' = '0';

CREATE DATABASE IF NOT EXISTS gold;

-- Per-branch statistics, only for branches with at least 2 accounts (a group that drops below is
-- deleted from the Gold table).
CREATE TABLE IF NOT EXISTS gold.branch_stats (
  bid BIGINT,
  accounts BIGINT,
  min_balance BIGINT,
  max_balance BIGINT,
  distinct_balances BIGINT,
  avg_balance BIGINT,
  PRIMARY KEY (bid) NOT ENFORCED
);

INSERT INTO gold.branch_stats
SELECT bid, COUNT(*), MIN(balance), MAX(balance), COUNT(DISTINCT balance), AVG(balance)
FROM silver.`accounts$changelog` /*+ OPTIONS('starting-version'='1') */
GROUP BY bid
HAVING COUNT(*) >= 2;

-- The two largest accounts of each branch, by branch name (a join, then a top-N).
CREATE TABLE IF NOT EXISTS gold.top_accounts (
  branch STRING,
  rn BIGINT,
  aid BIGINT,
  balance BIGINT,
  PRIMARY KEY (branch, rn) NOT ENFORCED
);

INSERT INTO gold.top_accounts
SELECT branch, rn, aid, balance
FROM (
  SELECT b.name AS branch, a.aid, a.balance,
         ROW_NUMBER() OVER (PARTITION BY b.name ORDER BY a.balance DESC, a.aid) AS rn
  FROM silver.`accounts$changelog` /*+ OPTIONS('starting-version'='1') */ AS a
  JOIN silver.`branches$changelog` /*+ OPTIONS('starting-version'='1') */ AS b
    ON a.bid = b.bid
)
WHERE rn <= 2;
