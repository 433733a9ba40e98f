#!/bin/sh
# resplock's container entrypoint, accepting what the official redis image accepts:
#   docker run resplock                                  -> resplock (default settings)
#   docker run resplock --save "" --appendonly no        -> resplock --save "" ...
#   docker run resplock redis-server --port 6380         -> resplock --port 6380
#   docker run resplock /etc/redis/redis.conf --port 1   -> resplock /etc/redis/redis.conf ...
#   docker run resplock sh -c '...'                      -> any other program, as given
# As the official image (built with protected mode off, bind "* -::*"), a server started
# without a config file listens on every interface with protected mode off; the options the
# container is given come later, so they win. A config file decides for itself.
set -e

# First argument an option (`--port`) or a config file (`something.conf`): the server.
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
	set -- redis-server "$@"
fi

if [ "$1" = 'redis-server' ] || [ "$1" = 'resplock' ]; then
	shift
	case "$1" in
		''|-*) exec resplock --bind '* -::*' --protected-mode no "$@" ;;
		*) exec resplock "$@" ;;
	esac
fi

exec "$@"
