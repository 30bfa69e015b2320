-- fk experiment: random inserts into a child table whose parents exist
-- (users 1..users, forum 1..forums are created by the driver with explicit ids).
local cs = require("cs_common")

sysbench.cmdline.options = cs.options({
   table = {"child table (users_posts, users_posts_fk1, users_posts_fk)", "users_posts"},
   users = {"number of parent rows in users", 1000},
   forums = {"number of parent rows in forum", 100},
   message_len = {"message length (16 bytes of keys + 150 = the field facts' ~168-byte"
                     .. " records)", 100},
})

local con

cs.main({
   init = function()
      con = cs.connect()
   end,
   setup = function(v)
      v.pattern = string.rep("@", v.message_len)
   end,
   step = function(v)
      local uid = sysbench.rand.uniform(1, v.users)
      local fid = sysbench.rand.uniform(1, v.forums)
      cs.attempt(v, 1)
      cs.query(con, string.format("INSERT INTO %s (uid, fid, message) VALUES (%d, %d, '%s')",
                                  v.table, uid, fid, sysbench.rand.string(v.pattern)))
      cs.commit(v, 1)
   end,
})
