-- batching_pk experiment: insert integers one per autocommit statement (batch=1) or
-- `batch` per transaction, into a table with or without a primary key. Ids are unique per
-- run: start_id (set per window by the driver) + tid + threads * (variant index - 1)
-- + threads * variants * n, so variants interleaved on one table never collide.
local cs = require("cs_common")

sysbench.cmdline.options = cs.options({
   table = {"table (bp_pk, bp_nopk)", "bp_pk"},
   batch = {"rows per transaction; 1 = autocommit single-row inserts", 1},
   start_id = {"first id of this window (a string: ids pass 2^31)", "1"},
})

local con

local function insert(v)
   cs.query(con, string.format("INSERT INTO %s (id) VALUES (%d)", v.table, v.next_id))
   v.next_id = v.next_id + v.stride
end

cs.main({
   init = function()
      con = cs.connect()
   end,
   setup = function(v, count)
      local threads = sysbench.opt.threads
      v.next_id = tonumber(v.start_id) + sysbench.tid + threads * (v.index - 1)
      v.stride = threads * count
   end,
   step = function(v)
      local batch = v.batch
      if batch <= 1 then
         cs.attempt(v, 1)
         insert(v)
         cs.commit(v, 1)
         return
      end
      cs.attempt(v, batch)
      cs.query(con, "BEGIN")
      for _ = 1, batch do insert(v) end
      cs.query(con, "COMMIT")
      cs.commit(v, batch)
   end,
})
