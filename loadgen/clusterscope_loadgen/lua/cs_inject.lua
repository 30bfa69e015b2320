-- inject experiments: a known server-side cost of one mechanism, and a twin that runs the
-- same statements without it (ddl.py and inject.py create the tables: identical DDL, ids
-- 1..table_rows and the hot rows pre-filled). Every step upserts a random id of its variant's
-- table, so the table keeps its size:
--   sleep_us >= 0: first `DO SLEEP(sleep_us / 1e6)`: the server thread waits on a timed
--                  condition, using nothing (Item_func_sleep::val_int, MariaDB/server
--                  sql/item_func.cc, 001f93df2be5d34d1bbb5ce514ced07ed5aec20d; below 10 us it
--                  returns at once, so the twin's SLEEP(0) is the same round trip, no wait)
--   work:          BENCHMARK(work, SHA2(...)) in the upsert's values: the server evaluates
--                  the SHA2 `work` times for the statement and returns 0
--                  (Item_func_benchmark::val_int, same file): server CPU per statement
--   hot:           shared: the upsert and an UPDATE of one of hot_keys shared rows in one
--                  transaction (the row lock is held until COMMIT); private: the same, on a
--                  row of this thread's own (the twin); none: autocommit upsert only
--   pad_bytes:     bytes the server puts in the pad column (REPEAT): a larger row image in
--                  the write-set, gcache, the appliers and the redo log
local cs = require("cs_common")

sysbench.cmdline.options = cs.options({
   table = {"table (inj_<kind>_b, inj_<kind>_v)", "inj_aa_b"},
   -- not `rows`: cs_common counts a variant's committed rows in v.rows
   table_rows = {"ids 1..table_rows, upserted at random (inject.py pre-fills them)", 10000},
   sleep_us = {"server sleep per step in microseconds; -1: no DO SLEEP statement", -1},
   work = {"SHA2 evaluations (BENCHMARK) per upsert", 0},
   hot = {"none | shared | private: also update a hot row in the same transaction", "none"},
   hot_keys = {"shared hot rows (hot=shared picks one at random)", 1},
   pad_bytes = {"bytes of the pad column, built by the server", 0},
})

-- inject.py: HOT_BASE + 1..hot_keys are the shared rows, PRIVATE_BASE + tid each thread's own
local HOT_BASE, PRIVATE_BASE = 2000000000, 2100000000

local con

cs.main({
   init = function()
      con = cs.connect()
   end,
   setup = function(v)
      if v.hot ~= "none" and v.hot ~= "shared" and v.hot ~= "private" then
         error("cs_inject: hot must be none, shared or private, not " .. tostring(v.hot))
      end
      v.upsert = "INSERT INTO " .. v.table .. " (id, k, work, pad) VALUES (%d, %d +"
         .. " BENCHMARK(%d, SHA2('%d', 256)), %d, REPEAT('p', %d)) ON DUPLICATE KEY UPDATE"
         .. " k = VALUES(k), work = VALUES(work), pad = VALUES(pad)"
      v.bump = "UPDATE " .. v.table .. " SET k = k + 1 WHERE id = %d"
   end,
   step = function(v)
      if v.sleep_us >= 0 then
         cs.query(con, string.format("DO SLEEP(%.6f)", v.sleep_us / 1e6))
      end
      local id = sysbench.rand.uniform(1, v.table_rows)
      local upsert = string.format(v.upsert, id, sysbench.rand.uniform(1, 1000000000),
                                   v.work, id, v.work, v.pad_bytes)
      if v.hot == "none" then
         cs.query(con, upsert)
         return
      end
      local row = PRIVATE_BASE + sysbench.tid
      if v.hot == "shared" then row = HOT_BASE + sysbench.rand.uniform(1, v.hot_keys) end
      cs.query(con, "BEGIN")
      cs.query(con, upsert)
      cs.query(con, string.format(v.bump, row))
      cs.query(con, "COMMIT")
   end,
})
