-- Shared by the clusterscope loadgen scripts (sysbench 1.0.20, LuaJIT).
-- Credentials: the driver passes no password in argv; libmariadb reads MYSQL_PWD.
local M = {}

-- Rows this thread saw committed (counted only after the statement/COMMIT returned), and
-- reads that missed the session's own write: printed once per thread at the end so the
-- driver can verify row counts and report stale reads.
M.committed = 0
M.stale = 0

function M.connect()
   local drv = sysbench.sql.driver()
   return drv:connect()
end

-- The identity the driver compares to route a connection (host:port:wsrep_node_name; the
-- name empty on MySQL, an NDB SQL node, which has no wsrep variables): target.py IDENTITY_SQL.
function M.identity(con)
   local rs = con:query("SELECT CONCAT(@@hostname, ':', @@port, ':')")
   local id = rs:fetch_row()[1]
   rs:free()
   rs = con:query("SHOW VARIABLES LIKE 'wsrep_node_name'")
   local row = rs:fetch_row()
   rs:free()
   return row and (id .. row[2]) or id
end

function M.report()
   io.stdout:write(string.format("CSSTAT tid=%d committed=%d stale=%d\n",
                                 sysbench.tid, M.committed, M.stale))
   io.stdout:flush()
end

function M.query(con, sql)
   local rs = con:query(sql)
   if rs ~= nil and type(rs) ~= "number" then rs:free() end
end

return M
