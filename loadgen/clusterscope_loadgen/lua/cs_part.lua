-- partitioning experiment: point selects (pruned to one partition) or primary-key range
-- scans (every partition, since the table is partitioned by KEY(id)).
local cs = require("cs_common")

sysbench.cmdline.options = cs.options({
   table = {"table (part_p1, part_p8)", "part_p1"},
   rows = {"rows in the table", 20000},
   mode = {"point or range", "point"},
   range_size = {"rows per range scan", 100},
})

local con

cs.main({
   init = function()
      con = cs.connect()
   end,
   step = function(v)
      local sql
      if v.mode == "range" then
         local a = sysbench.rand.uniform(1, v.rows - v.range_size)
         sql = string.format("SELECT c FROM %s WHERE id BETWEEN %d AND %d", v.table, a,
                             a + v.range_size - 1)
      else
         sql = string.format("SELECT c FROM %s WHERE id = %d", v.table,
                             sysbench.rand.uniform(1, v.rows))
      end
      cs.query(con, sql)
   end,
})
