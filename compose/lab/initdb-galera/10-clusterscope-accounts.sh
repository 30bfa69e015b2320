#!/bin/sh
# Runs once, when galera-node1 starts on an empty datadir (the image's entrypoint runs it
# against its temporary server, wsrep off); node2 and node3 receive the accounts by SST.
# Passwords come from the Compose secrets, never from argv: the client reads MYSQL_PWD.
set -eu
exporter_pw=$(cat /run/secrets/lab_exporter_password)
loadgen_pw=$(cat /run/secrets/lab_loadgen_password)
sst_pw=$(sed -n 's/^wsrep_sst_auth *= *[^:]*://p' /etc/mysql/conf.d/zz-clusterscope-sst.cnf)
sst_user=$(sed -n 's/^wsrep_sst_auth *= *\([^:]*\):.*/\1/p' /etc/mysql/conf.d/zz-clusterscope-sst.cnf)
# the secrets go into SQL string literals below: one with a quote or a backslash could end
# the literal and run what follows, so it is refused
for secret in "$exporter_pw" "$loadgen_pw" "$sst_pw" "$sst_user"; do
  case "$secret" in
    *"'"*|*\\*|"") echo "clusterscope accounts: a lab secret is empty or holds a quote or a backslash; use letters, digits and -_.~+/=" >&2; exit 1;;
  esac
done
MYSQL_PWD=$(cat /run/secrets/lab_db_root_password)
export MYSQL_PWD
mariadb --protocol=socket -uroot <<SQL
-- mysqld_exporter runs global_status and global_variables only: no privilege needed
CREATE USER IF NOT EXISTS 'clusterscope_exporter'@'%' IDENTIFIED BY '${exporter_pw}';
CREATE USER IF NOT EXISTS 'clusterscope_app'@'%' IDENTIFIED BY '${loadgen_pw}';
-- the loadgen writes its cs_<experiment> schemas and nothing else (it refuses more)
GRANT CREATE, DROP, ALTER, INDEX, REFERENCES, SELECT, INSERT, UPDATE, DELETE
  ON \`cs\\_%\`.* TO 'clusterscope_app'@'%';
CREATE USER IF NOT EXISTS '${sst_user}'@'localhost' IDENTIFIED BY '${sst_pw}';
GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR ON *.* TO '${sst_user}'@'localhost';
SQL
unset MYSQL_PWD
