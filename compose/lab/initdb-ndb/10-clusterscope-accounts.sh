#!/bin/sh
# Runs once, when ndb-sql starts on an empty datadir (the image's entrypoint runs it against
# its temporary server after setting the root password). Passwords come from the Compose
# secrets, never from argv: the client reads MYSQL_PWD.
#
# Oracle's entrypoint *sources* this file (mysql/mysql-docker mysql-cluster/8.4/
# docker-entrypoint.sh: `. "$f"`) inside its own `set -e` shell: no `set -u` here (it would
# leak into the entrypoint, which reads unset variables after init) and no `exit`.
exporter_pw=$(cat /run/secrets/lab_exporter_password)
loadgen_pw=$(cat /run/secrets/lab_loadgen_password)
# the secrets go into SQL string literals below: one with a quote or a backslash could end
# the literal and run what follows, so it is refused (`return`: this file is sourced)
for secret in "$exporter_pw" "$loadgen_pw"; do
  case "$secret" in
    *"'"*|*\\*|"") echo "clusterscope accounts: a lab secret is empty or holds a quote or a backslash; use letters, digits and -_.~+/=" >&2; return 1;;
  esac
done
MYSQL_PWD=$(cat /run/secrets/lab_db_root_password)
export MYSQL_PWD
mysql --protocol=socket -uroot <<SQL
CREATE USER IF NOT EXISTS 'ndbinfo_exporter'@'%' IDENTIFIED BY '${exporter_pw}';
GRANT SELECT ON ndbinfo.* TO 'ndbinfo_exporter'@'%';
CREATE USER IF NOT EXISTS 'clusterscope_app'@'%' IDENTIFIED BY '${loadgen_pw}';
-- the loadgen writes its cs_<experiment> schemas and nothing else (it refuses more)
GRANT CREATE, DROP, ALTER, INDEX, REFERENCES, SELECT, INSERT, UPDATE, DELETE
  ON \`cs\\_%\`.* TO 'clusterscope_app'@'%';
SQL
unset MYSQL_PWD
