-- fk experiment: random inserts into a child table whose parents exist
-- (users 1..users, forum 1..forums are created by the driver with explicit ids).
local cs = require("cs_common")

sysbench.cmdline.options = {
   table = {"child table (users_posts, users_posts_fk1, users_posts_fk)", "users_posts"},
   users = {"number of parent rows in users", 1000},
   forums = {"number of parent rows in forum", 100},
   message_len = {"message length (field facts: ~168-byte records)", 100},
}

function thread_init()
   con = cs.connect()
   msg_pattern = string.rep("@", sysbench.opt.message_len)
end

function event()
   local uid = sysbench.rand.uniform(1, sysbench.opt.users)
   local fid = sysbench.rand.uniform(1, sysbench.opt.forums)
   cs.query(con, string.format("INSERT INTO %s (uid, fid, message) VALUES (%d, %d, '%s')",
                               sysbench.opt.table, uid, fid,
                               sysbench.rand.string(msg_pattern)))
   cs.committed = cs.committed + 1
end

function thread_done()
   cs.report()
   con:disconnect()
end
