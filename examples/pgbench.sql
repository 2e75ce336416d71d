-- The pgbench pipeline of examples/pgbench-flows.yaml as streaming-table statements.
-- Usage: bin/changeflow run examples/pgbench.sql
-- The capture's path is relative to this file: ../shared/data beside the clone, where the tests find
-- the recorded PostgreSQL capture. Point it at your own capture (a file or a folder).

SET name = pgbench;
USE SCHEMA public;

-- One Debezium capture holds every table; each view picks one by its name (table =>).
CREATE TEMPORARY VIEW accounts_cdc AS SELECT * FROM STREAM read_files(
  '../../shared/data/pgbench-s1/capture-pgbench-s1.jsonl.gz',
  format => 'debezium-json',
  table => 'pgbench_accounts');

CREATE OR REFRESH STREAMING TABLE pgbench_accounts (
  aid INT, bid INT, abalance INT, filler STRING
);

CREATE FLOW pgbench_accounts AS AUTO CDC INTO pgbench_accounts
  FROM STREAM(accounts_cdc)
  KEYS (aid)
  SEQUENCE BY source.lsn      -- the default for Debezium PostgreSQL; never ts_ms (A5)
  STORED AS SCD TYPE 1;

-- The standalone form: the table and its flow in one statement.
CREATE OR REFRESH STREAMING TABLE pgbench_branches (bid INT, bbalance INT, filler STRING)
  FLOW AUTO CDC
  FROM STREAM read_files('../../shared/data/pgbench-s1/capture-pgbench-s1.jsonl.gz',
                         format => 'debezium-json', table => 'pgbench_branches')
  KEYS (bid)
  STORED AS SCD TYPE 1;

-- The older form of the same flow.
CREATE OR REFRESH STREAMING TABLE pgbench_tellers (tid INT, bid INT, tbalance INT, filler STRING);

APPLY CHANGES INTO LIVE.pgbench_tellers
  FROM STREAM(LIVE.tellers_cdc)
  KEYS (tid)
  STORED AS SCD TYPE 1;

-- A view may be defined after the flow that reads it (statements are resolved as a whole).
CREATE TEMPORARY VIEW tellers_cdc AS SELECT * FROM STREAM read_files(
  '../../shared/data/pgbench-s1/capture-pgbench-s1.jsonl.gz',
  format => 'debezium-json', table => 'pgbench_tellers');

-- No primary key: every insert is appended.
CREATE OR REFRESH STREAMING TABLE pgbench_history (
  tid INT, bid INT, aid INT, delta INT, mtime TIMESTAMP(6), filler STRING
) AS SELECT * FROM STREAM read_files('../../shared/data/pgbench-s1/capture-pgbench-s1.jsonl.gz',
                                     format => 'debezium-json', table => 'pgbench_history');
