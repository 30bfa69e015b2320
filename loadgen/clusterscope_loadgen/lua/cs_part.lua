-- partitioning experiment: point selects (pruned to one partition) or primary-key range
-- scans (every partition, since the table is partitioned by KEY(id)).
local cs = require("cs_common")

sysbench.cmdline.options = {
   table = {"table (part_p1, part_p8)", "part_p1"},
   rows = {"rows in the table", 20000},
   mode = {"point or range", "point"},
   range_size = {"rows per range scan", 100},
}

function thread_init()
   con = cs.connect()
end

function event()
   local sql
   if sysbench.opt.mode == "range" then
      local a = sysbench.rand.uniform(1, sysbench.opt.rows - sysbench.opt.range_size)
      sql = string.format("SELECT c FROM %s WHERE id BETWEEN %d AND %d", sysbench.opt.table,
                          a, a + sysbench.opt.range_size - 1)
   else
      sql = string.format("SELECT c FROM %s WHERE id = %d", sysbench.opt.table,
                          sysbench.rand.uniform(1, sysbench.opt.rows))
   end
   cs.query(con, sql)
end

function thread_done()
   con:disconnect()
end
