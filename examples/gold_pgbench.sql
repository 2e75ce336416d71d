-- Gold over the pgbench Silver tables: bin/changeflow gold examples/gold_pgbench.sql [--bounded]
-- Silver: public.pgbench_accounts, public.pgbench_branches, public.pgbench_tellers (SCD type 1,
-- keyed) and public.pgbench_history (append-only), as written by
--   bin/changeflow ingest --flows examples/pgbench-flows.yaml <capture>
-- Every INSERT reads changelogs ($changelog: +I/-U/+U/-D), so each Gold table follows Silver's
-- updates and deletes exactly once; --starting-version N rebuilds them all from Silver as of N-1.
SET 'table.exec.state.ttl' = '0';

CREATE DATABASE IF NOT EXISTS gold;

-- Balances per branch: SUM, COUNT, MIN, MAX and AVG of the accounts of each branch.
CREATE TABLE IF NOT EXISTS gold.branch_balances (
  bid INT,
  accounts BIGINT,
  total BIGINT,
  min_balance INT,
  max_balance INT,
  avg_balance DECIMAL(14, 2),
  PRIMARY KEY (bid) NOT ENFORCED
);

INSERT INTO gold.branch_balances
SELECT bid, COUNT(*), SUM(CAST(abalance AS BIGINT)), MIN(abalance), MAX(abalance),
       CAST(AVG(CAST(abalance AS DECIMAL(14, 2))) AS DECIMAL(14, 2))
FROM public.`pgbench_accounts$changelog`
GROUP BY bid;

-- A join of branches, tellers and accounts: per branch, its balance beside the totals of its
-- tellers and of its accounts (pgbench moves the same delta into all three).
CREATE TABLE IF NOT EXISTS gold.branch_ledger (
  bid INT,
  branch_balance INT,
  tellers BIGINT,
  tellers_total BIGINT,
  accounts_total BIGINT,
  PRIMARY KEY (bid) NOT ENFORCED
);

INSERT INTO gold.branch_ledger
SELECT b.bid, b.bbalance, t.tellers, t.total, a.total
FROM public.`pgbench_branches$changelog` AS b
JOIN (SELECT bid, COUNT(*) AS tellers, SUM(CAST(tbalance AS BIGINT)) AS total
      FROM public.`pgbench_tellers$changelog` GROUP BY bid) AS t
  ON t.bid = b.bid
JOIN (SELECT bid, SUM(CAST(abalance AS BIGINT)) AS total
      FROM public.`pgbench_accounts$changelog` GROUP BY bid) AS a
  ON a.bid = b.bid;

-- The three largest balances of each branch among the accounts that moved (abalance <> 0): a
-- top-N that follows updates and deletes. The filter keeps the ranked partition small (the
-- accounts the workload touched, about 10,000 of 100,000): a ROW_NUMBER over a partition that
-- receives retractions costs O(rows in the partition) per change in Flink (RetractRankFunction),
-- and pgbench -s 1 puts all 100,000 accounts in one branch.
CREATE TABLE IF NOT EXISTS gold.top_accounts (
  bid INT,
  rn BIGINT,
  aid INT,
  abalance INT,
  PRIMARY KEY (bid, rn) NOT ENFORCED
);

INSERT INTO gold.top_accounts
SELECT bid, rn, aid, abalance
FROM (
  SELECT bid, aid, abalance,
         ROW_NUMBER() OVER (PARTITION BY bid ORDER BY abalance DESC, aid) AS rn
  FROM public.`pgbench_accounts$changelog`
  WHERE abalance <> 0
)
WHERE rn <= 3;

-- Tellers with at least 1,000 transactions in the history (a filter on an aggregate).
CREATE TABLE IF NOT EXISTS gold.busy_tellers (
  tid INT,
  transactions BIGINT,
  net_delta BIGINT,
  PRIMARY KEY (tid) NOT ENFORCED
);

INSERT INTO gold.busy_tellers
SELECT tid, COUNT(*), SUM(CAST(delta AS BIGINT))
FROM public.`pgbench_history$changelog`
GROUP BY tid
HAVING COUNT(*) >= 1000;
