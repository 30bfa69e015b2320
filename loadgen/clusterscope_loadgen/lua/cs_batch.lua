-- batching_pk experiment: insert integers one per autocommit statement (batch=1) or
-- `batch` per transaction, into a table with or without a primary key. Ids are unique per
-- run: start_id (set per window by the driver) + tid + threads * n.
local cs = require("cs_common")

sysbench.cmdline.options = {
   table = {"table (bp_pk, bp_nopk)", "bp_pk"},
   batch = {"rows per transaction; 1 = autocommit single-row inserts", 1},
   start_id = {"first id of this window (a string: ids pass 2^31)", "1"},
}

function thread_init()
   con = cs.connect()
   next_id = tonumber(sysbench.opt.start_id) + sysbench.tid
end

local function insert()
   cs.query(con, string.format("INSERT INTO %s (id) VALUES (%d)", sysbench.opt.table, next_id))
   next_id = next_id + sysbench.opt.threads
end

function event()
   local batch = sysbench.opt.batch
   if batch <= 1 then
      insert()
      cs.committed = cs.committed + 1
      return
   end
   cs.query(con, "BEGIN")
   for _ = 1, batch do insert() end
   cs.query(con, "COMMIT")
   cs.committed = cs.committed + batch
end

function thread_done()
   cs.report()
   con:disconnect()
end
