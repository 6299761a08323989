#!/bin/sh
# Runs once, when the PostgreSQL volume is initialised: the `carnet` role (SCRAM password from its
# secret file) owning the `carnet` database. Carnet creates its schemas itself (migrations). The
# password reaches psql through its environment (\getenv, psql >= 15), never its command line.
set -eu
ROLE_PASSWORD=$(cat /run/secrets/postgres_carnet_password)
export ROLE_PASSWORD
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres <<'SQL'
\getenv pw ROLE_PASSWORD
CREATE ROLE carnet LOGIN PASSWORD :'pw';
CREATE DATABASE carnet OWNER carnet;
REVOKE ALL ON DATABASE carnet FROM PUBLIC;
SQL
