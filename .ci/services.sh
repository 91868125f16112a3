# Sourced by .ci/run: makes a local PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) available
# for the multi-process suites. Starts them when installed but stopped; installs them with apt when
# missing. Exports CLUSTER_DATABASE_URL / CLUSTER_REDIS_URL. Never touches existing data.
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
_apt_updated=""
_apt_install() {
  [ -n "$_apt_updated" ] || { $SUDO apt-get update -q; _apt_updated=1; }
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}
_wait_for() { for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done; return 1; }

export CLUSTER_DATABASE_URL="${CLUSTER_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "installing PostgreSQL"
    _apt_install postgresql
    _installed_pg=1
  fi
  _pg_version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "starting PostgreSQL $_pg_version"
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$_pg_version" main start || true
  _wait_for pg_isready -h 127.0.0.1 -p 5432 || { echo "PostgreSQL did not start"; return 1; }
  if [ -n "${_installed_pg:-}" ]; then
    # A fresh Debian cluster asks for a password over TCP: give the superuser one for the tests.
    $SUDO su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\""
    export CLUSTER_DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/postgres
  fi
fi

export CLUSTER_REDIS_URL="${CLUSTER_REDIS_URL:-redis://127.0.0.1:6379}"
if ! (command -v redis-cli >/dev/null 2>&1 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1); then
  command -v redis-server >/dev/null 2>&1 || { echo "installing Redis"; _apt_install redis-server; }
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  _wait_for redis-cli -h 127.0.0.1 -p 6379 ping || { echo "Redis did not start"; return 1; }
fi
