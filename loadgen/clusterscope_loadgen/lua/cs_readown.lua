-- read_backup experiment: write a row on the writer, read it back at once on the reader
-- (Galera: another node, with the variant's wsrep_sync_wait; NDB: the same SQL node,
-- the table's READ_BACKUP decides which replica answers). Each thread owns its rows, so a
-- read that does not return the value just written is a stale read.
local cs = require("cs_common")

sysbench.cmdline.options = cs.options({
   table = {"table", "rb"},
   rows = {"rows in the table", 1000},
   writer = {"identity of the writer node (host:port:node_name); empty: any", ""},
   reader = {"identity of the reader node; empty: the writer's node", ""},
   sync_wait = {"wsrep_sync_wait for the reader session; empty: leave alone", ""},
})

local writers = {}  -- identity -> connection, shared by the variants writing there
local value, per_thread

cs.main({
   init = function()
      per_thread = math.floor(sysbench.opt.rows / sysbench.opt.threads)
      value = os.time() * 1000000
   end,
   setup = function(v)
      local w = tostring(v.writer)
      writers[w] = writers[w] or cs.connect_to(w)
      v.writer_con = writers[w]
      if v.reader == "" and v.sync_wait == "" then
         v.reader_con = v.writer_con
      else
         -- its own session: the variants' wsrep_sync_wait differ
         v.reader_con = cs.connect_to(v.reader == "" and w or tostring(v.reader))
         if v.sync_wait ~= "" then
            cs.query(v.reader_con, "SET SESSION wsrep_sync_wait = " .. v.sync_wait)
         end
      end
   end,
   step = function(v)
      local id = sysbench.tid + 1 + sysbench.opt.threads
         * sysbench.rand.uniform(0, per_thread - 1)
      value = value + 1
      cs.query(v.writer_con, string.format("UPDATE %s SET v = %d WHERE id = %d", v.table,
                                           value, id))
      local got = cs.fetch(v.reader_con, string.format("SELECT v FROM %s WHERE id = %d",
                                                       v.table, id))
      if got == nil or tonumber(got) ~= value then cs.stale_read(v) end
   end,
})
