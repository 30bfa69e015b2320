-- read_backup experiment: write a row on the writer, read it back at once on the reader
-- (Galera: another node, with the session's wsrep_sync_wait; NDB: the same SQL node,
-- the table's READ_BACKUP decides which replica answers). Each thread owns its rows, so a
-- read that does not return the value just written is a stale read.
local cs = require("cs_common")

sysbench.cmdline.options = {
   table = {"table", "rb"},
   rows = {"rows in the table", 1000},
   writer = {"identity of the writer node (host:port:node_name); empty: any", ""},
   reader = {"identity of the reader node; empty: the writer's connection", ""},
   sync_wait = {"wsrep_sync_wait for the reader session; empty: leave alone", ""},
}

local function pick(conns, want)
   for i, c in ipairs(conns) do
      if want == "" or c.id == want then
         table.remove(conns, i)
         return c.con
      end
   end
   return nil
end

function thread_init()
   -- sysbench hands out hosts round-robin across all threads' connections, so open a few
   -- and keep the ones on the wanted nodes. Threads that connect in lockstep would each see
   -- the same host every time (thread A always even, B always odd): a random pause between
   -- attempts breaks the lockstep.
   local conns = {}
   writer, reader = nil, nil
   for attempt = 1, 32 do
      if attempt > 1 then
         for _ = 1, sysbench.rand.uniform(1, 200000) do end
      end
      local c = cs.connect()
      table.insert(conns, {con = c, id = cs.identity(c)})
      if writer == nil then writer = pick(conns, sysbench.opt.writer) end
      if sysbench.opt.reader == "" then
         reader = writer
      elseif reader == nil then
         reader = pick(conns, sysbench.opt.reader)
      end
      if writer ~= nil and reader ~= nil then break end
   end
   for _, c in ipairs(conns) do c.con:disconnect() end
   if writer == nil or reader == nil then
      error("cs_readown: could not get connections to writer and reader nodes")
   end
   if sysbench.opt.sync_wait ~= "" then
      cs.query(reader, "SET SESSION wsrep_sync_wait = " .. sysbench.opt.sync_wait)
   end
   per_thread = math.floor(sysbench.opt.rows / sysbench.opt.threads)
   value = os.time() * 1000000
end

function event()
   local id = sysbench.tid + 1 + sysbench.opt.threads * sysbench.rand.uniform(0, per_thread - 1)
   value = value + 1
   cs.query(writer, string.format("UPDATE %s SET v = %d WHERE id = %d",
                                  sysbench.opt.table, value, id))
   local rs = reader:query(string.format("SELECT v FROM %s WHERE id = %d",
                                         sysbench.opt.table, id))
   local row = rs:fetch_row()
   if row == nil or tonumber(row[1]) ~= value then cs.stale = cs.stale + 1 end
   rs:free()
end

function thread_done()
   cs.report()
   if reader ~= writer then reader:disconnect() end
   writer:disconnect()
end
