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
MYSQL_PWD=$(cat /run/secrets/lab_db_root_password)
export MYSQL_PWD
mysql --protocol=socket -uroot <<SQL
CREATE USER IF NOT EXISTS 'ndbinfo_exporter'@'%' IDENTIFIED BY '${exporter_pw}';
GRANT SELECT ON ndbinfo.* TO 'ndbinfo_exporter'@'%';
CREATE USER IF NOT EXISTS 'clusterscope_app'@'%' IDENTIFIED BY '${loadgen_pw}';
CREATE DATABASE IF NOT EXISTS sbtest;
GRANT ALL PRIVILEGES ON \`sbtest\`.* TO 'clusterscope_app'@'%';
GRANT ALL PRIVILEGES ON \`cs\\_%\`.* TO 'clusterscope_app'@'%';
SQL
unset MYSQL_PWD
