//! COMMAND INFO / COMMAND DOCS replies, byte for byte as redis-server 7.0.15 gave them (recorded
//! with conformance/tools/gen_command_meta.py's reader), and the metadata's coverage of the
//! command table.

mod common;
use common::*;

/// (protocol, subcommand, command name, redis 7.0.15's exact reply)
const RECORDED: &[(u8, &str, &str, &[u8])] = &[
    (2, "INFO", "get", b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"),
    (2, "INFO", "set", b"*1\r\n*10\r\n$3\r\nset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@string\r\n+@slow\r\n*0\r\n*1\r\n*8\r\n$5\r\nnotes\r\n$48\r\nRW and ACCESS due to the optional `GET` argument\r\n$5\r\nflags\r\n*4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"),
    (2, "INFO", "mset", b"*1\r\n*10\r\n$4\r\nmset\r\n:-3\r\n*2\r\n+write\r\n+denyoom\r\n:1\r\n:-1\r\n:2\r\n*3\r\n+@write\r\n+@string\r\n+@slow\r\n*2\r\n$26\r\nrequest_policy:multi_shard\r\n$29\r\nresponse_policy:all_succeeded\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:2\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"),
    (2, "INFO", "del", b"*1\r\n*10\r\n$3\r\ndel\r\n:-2\r\n*1\r\n+write\r\n:1\r\n:-1\r\n:1\r\n*3\r\n+@keyspace\r\n+@write\r\n+@slow\r\n*2\r\n$26\r\nrequest_policy:multi_shard\r\n$23\r\nresponse_policy:agg_sum\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RM\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"),
    (2, "INFO", "eval", b"*1\r\n*10\r\n$4\r\neval\r\n:-3\r\n*5\r\n+noscript\r\n+stale\r\n+skip_monitor\r\n+no_mandatory_keys\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@slow\r\n+@scripting\r\n*0\r\n*1\r\n*8\r\n$5\r\nnotes\r\n$78\r\nWe cannot tell how the keys will be used so we assume the worst, RW and UPDATE\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n*6\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n*0\r\n"),
    (2, "INFO", "client|kill", b"*1\r\n*10\r\n$11\r\nclient|kill\r\n:-3\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n"),
    (2, "INFO", "hset", b"*1\r\n*10\r\n$4\r\nhset\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@hash\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"),
    (2, "INFO", "subscribe", b"*1\r\n*10\r\n$9\r\nsubscribe\r\n:-2\r\n*4\r\n+pubsub\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@pubsub\r\n+@slow\r\n*0\r\n*0\r\n*0\r\n"),
    (2, "INFO", "publish", b"*1\r\n*10\r\n$7\r\npublish\r\n:3\r\n*4\r\n+pubsub\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@pubsub\r\n+@fast\r\n*0\r\n*0\r\n*0\r\n"),
    (2, "DOCS", "get", b"*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n"),
    (2, "DOCS", "set", b"*2\r\n$3\r\nset\r\n*12\r\n$7\r\nsummary\r\n$29\r\nSet the string value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$7\r\nhistory\r\n*4\r\n*2\r\n$6\r\n2.6.12\r\n$44\r\nAdded the `EX`, `PX`, `NX` and `XX` options.\r\n*2\r\n$5\r\n6.0.0\r\n$27\r\nAdded the `KEEPTTL` option.\r\n*2\r\n$5\r\n6.2.0\r\n$42\r\nAdded the `GET`, `EXAT` and `PXAT` option.\r\n*2\r\n$5\r\n7.0.0\r\n$55\r\nAllowed the `NX` and `GET` options to be used together.\r\n$9\r\narguments\r\n*5\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n*4\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n*10\r\n$4\r\nname\r\n$9\r\ncondition\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n$5\r\nflags\r\n*1\r\n+optional\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$2\r\nnx\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nNX\r\n*6\r\n$4\r\nname\r\n$2\r\nxx\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nXX\r\n*10\r\n$4\r\nname\r\n$3\r\nget\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$3\r\nGET\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\nflags\r\n*1\r\n+optional\r\n*8\r\n$4\r\nname\r\n$10\r\nexpiration\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nflags\r\n*1\r\n+optional\r\n$9\r\narguments\r\n*5\r\n*8\r\n$4\r\nname\r\n$7\r\nseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nEX\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n*8\r\n$4\r\nname\r\n$12\r\nmilliseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nPX\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n*8\r\n$4\r\nname\r\n$17\r\nunix-time-seconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$5\r\ntoken\r\n$4\r\nEXAT\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n*8\r\n$4\r\nname\r\n$22\r\nunix-time-milliseconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$5\r\ntoken\r\n$4\r\nPXAT\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n*8\r\n$4\r\nname\r\n$7\r\nkeepttl\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$7\r\nKEEPTTL\r\n$5\r\nsince\r\n$5\r\n6.0.0\r\n"),
    (2, "DOCS", "mset", b"*2\r\n$4\r\nmset\r\n*10\r\n$7\r\nsummary\r\n$36\r\nSet multiple keys to multiple values\r\n$5\r\nsince\r\n$5\r\n1.0.1\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$42\r\nO(N) where N is the number of keys to set.\r\n$9\r\narguments\r\n*1\r\n*8\r\n$4\r\nname\r\n$9\r\nkey_value\r\n$4\r\ntype\r\n$5\r\nblock\r\n$5\r\nflags\r\n*1\r\n+multiple\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n*4\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n"),
    (2, "DOCS", "del", b"*2\r\n$3\r\ndel\r\n*10\r\n$7\r\nsummary\r\n$12\r\nDelete a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$7\r\ngeneric\r\n$10\r\ncomplexity\r\n$288\r\nO(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).\r\n$9\r\narguments\r\n*1\r\n*8\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n$5\r\nflags\r\n*1\r\n+multiple\r\n"),
    (2, "DOCS", "client|kill", b"*2\r\n$11\r\nclient|kill\r\n*12\r\n$7\r\nsummary\r\n$31\r\nKill the connection of a client\r\n$5\r\nsince\r\n$5\r\n2.4.0\r\n$5\r\ngroup\r\n$10\r\nconnection\r\n$10\r\ncomplexity\r\n$48\r\nO(N) where N is the number of client connections\r\n$7\r\nhistory\r\n*5\r\n*2\r\n$6\r\n2.8.12\r\n$24\r\nAdded new filter format.\r\n*2\r\n$6\r\n2.8.12\r\n$12\r\n`ID` option.\r\n*2\r\n$5\r\n3.2.0\r\n$41\r\nAdded `master` type in for `TYPE` option.\r\n*2\r\n$5\r\n5.0.0\r\n$91\r\nReplaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility.\r\n*2\r\n$5\r\n6.2.0\r\n$15\r\n`LADDR` option.\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$6\r\nfilter\r\n$4\r\ntype\r\n$5\r\noneof\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$7\r\nip:port\r\n$4\r\ntype\r\n$6\r\nstring\r\n$16\r\ndeprecated_since\r\n$6\r\n2.8.12\r\n*8\r\n$4\r\nname\r\n$10\r\nnew-format\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nflags\r\n*1\r\n+multiple\r\n$9\r\narguments\r\n*6\r\n*10\r\n$4\r\nname\r\n$9\r\nclient-id\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nID\r\n$5\r\nsince\r\n$6\r\n2.8.12\r\n$5\r\nflags\r\n*1\r\n+optional\r\n*12\r\n$4\r\nname\r\n$26\r\nnormal_master_slave_pubsub\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\ntoken\r\n$4\r\nTYPE\r\n$5\r\nsince\r\n$6\r\n2.8.12\r\n$5\r\nflags\r\n*1\r\n+optional\r\n$9\r\narguments\r\n*5\r\n*6\r\n$4\r\nname\r\n$6\r\nnormal\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$6\r\nNORMAL\r\n*8\r\n$4\r\nname\r\n$6\r\nmaster\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$6\r\nMASTER\r\n$5\r\nsince\r\n$5\r\n3.2.0\r\n*6\r\n$4\r\nname\r\n$5\r\nslave\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$5\r\nSLAVE\r\n*8\r\n$4\r\nname\r\n$7\r\nreplica\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$7\r\nREPLICA\r\n$5\r\nsince\r\n$5\r\n5.0.0\r\n*6\r\n$4\r\nname\r\n$6\r\npubsub\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$6\r\nPUBSUB\r\n*8\r\n$4\r\nname\r\n$8\r\nusername\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$4\r\nUSER\r\n$5\r\nflags\r\n*1\r\n+optional\r\n*8\r\n$4\r\nname\r\n$7\r\nip:port\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$4\r\nADDR\r\n$5\r\nflags\r\n*1\r\n+optional\r\n*10\r\n$4\r\nname\r\n$7\r\nip:port\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$5\r\nLADDR\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\nflags\r\n*1\r\n+optional\r\n*8\r\n$4\r\nname\r\n$6\r\nyes/no\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$6\r\nSKIPME\r\n$5\r\nflags\r\n*1\r\n+optional\r\n"),
    (2, "DOCS", "hset", b"*2\r\n$4\r\nhset\r\n*12\r\n$7\r\nsummary\r\n$36\r\nSet the string value of a hash field\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$4\r\nhash\r\n$10\r\ncomplexity\r\n$132\r\nO(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.\r\n$7\r\nhistory\r\n*1\r\n*2\r\n$5\r\n4.0.0\r\n$47\r\nAccepts multiple `field` and `value` arguments.\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n*8\r\n$4\r\nname\r\n$11\r\nfield_value\r\n$4\r\ntype\r\n$5\r\nblock\r\n$5\r\nflags\r\n*1\r\n+multiple\r\n$9\r\narguments\r\n*2\r\n*4\r\n$4\r\nname\r\n$5\r\nfield\r\n$4\r\ntype\r\n$6\r\nstring\r\n*4\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n"),
    (2, "DOCS", "subscribe", b"*2\r\n$9\r\nsubscribe\r\n*10\r\n$7\r\nsummary\r\n$51\r\nListen for messages published to the given channels\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$6\r\npubsub\r\n$10\r\ncomplexity\r\n$55\r\nO(N) where N is the number of channels to subscribe to.\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$7\r\nchannel\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\nflags\r\n*1\r\n+multiple\r\n"),
    (2, "DOCS", "publish", b"*2\r\n$7\r\npublish\r\n*10\r\n$7\r\nsummary\r\n$27\r\nPost a message to a channel\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$6\r\npubsub\r\n$10\r\ncomplexity\r\n$141\r\nO(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).\r\n$9\r\narguments\r\n*2\r\n*4\r\n$4\r\nname\r\n$7\r\nchannel\r\n$4\r\ntype\r\n$6\r\nstring\r\n*4\r\n$4\r\nname\r\n$7\r\nmessage\r\n$4\r\ntype\r\n$6\r\nstring\r\n"),
    (3, "INFO", "get", b"*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"),
    (3, "INFO", "set", b"*1\r\n*10\r\n$3\r\nset\r\n:-3\r\n~2\r\n+write\r\n+denyoom\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@write\r\n+@string\r\n+@slow\r\n~0\r\n~1\r\n%4\r\n$5\r\nnotes\r\n$48\r\nRW and ACCESS due to the optional `GET` argument\r\n$5\r\nflags\r\n~4\r\n+RW\r\n+access\r\n+update\r\n+variable_flags\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"),
    (3, "INFO", "mset", b"*1\r\n*10\r\n$4\r\nmset\r\n:-3\r\n~2\r\n+write\r\n+denyoom\r\n:1\r\n:-1\r\n:2\r\n~3\r\n+@write\r\n+@string\r\n+@slow\r\n~2\r\n$26\r\nrequest_policy:multi_shard\r\n$29\r\nresponse_policy:all_succeeded\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+OW\r\n+update\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:2\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"),
    (3, "INFO", "del", b"*1\r\n*10\r\n$3\r\ndel\r\n:-2\r\n~1\r\n+write\r\n:1\r\n:-1\r\n:1\r\n~3\r\n+@keyspace\r\n+@write\r\n+@slow\r\n~2\r\n$26\r\nrequest_policy:multi_shard\r\n$23\r\nresponse_policy:agg_sum\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RM\r\n+delete\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:-1\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"),
    (3, "INFO", "eval", b"*1\r\n*10\r\n$4\r\neval\r\n:-3\r\n~5\r\n+noscript\r\n+stale\r\n+skip_monitor\r\n+no_mandatory_keys\r\n+movablekeys\r\n:0\r\n:0\r\n:0\r\n~2\r\n+@slow\r\n+@scripting\r\n~0\r\n~1\r\n%4\r\n$5\r\nnotes\r\n$78\r\nWe cannot tell how the keys will be used so we assume the worst, RW and UPDATE\r\n$5\r\nflags\r\n~3\r\n+RW\r\n+access\r\n+update\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:2\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$6\r\nkeynum\r\n$4\r\nspec\r\n%3\r\n$9\r\nkeynumidx\r\n:0\r\n$8\r\nfirstkey\r\n:1\r\n$7\r\nkeystep\r\n:1\r\n~0\r\n"),
    (3, "INFO", "client|kill", b"*1\r\n*10\r\n$11\r\nclient|kill\r\n:-3\r\n~4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n~4\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n+@connection\r\n~0\r\n~0\r\n~0\r\n"),
    (3, "INFO", "hset", b"*1\r\n*10\r\n$4\r\nhset\r\n:-4\r\n~3\r\n+write\r\n+denyoom\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@write\r\n+@hash\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RW\r\n+update\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"),
    (3, "INFO", "subscribe", b"*1\r\n*10\r\n$9\r\nsubscribe\r\n:-2\r\n~4\r\n+pubsub\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n~2\r\n+@pubsub\r\n+@slow\r\n~0\r\n~0\r\n~0\r\n"),
    (3, "INFO", "publish", b"*1\r\n*10\r\n$7\r\npublish\r\n:3\r\n~4\r\n+pubsub\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n~2\r\n+@pubsub\r\n+@fast\r\n~0\r\n~0\r\n~0\r\n"),
    (3, "DOCS", "get", b"%1\r\n$3\r\nget\r\n%5\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n"),
    (3, "DOCS", "set", b"%1\r\n$3\r\nset\r\n%6\r\n$7\r\nsummary\r\n$29\r\nSet the string value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$7\r\nhistory\r\n~4\r\n*2\r\n$6\r\n2.6.12\r\n$44\r\nAdded the `EX`, `PX`, `NX` and `XX` options.\r\n*2\r\n$5\r\n6.0.0\r\n$27\r\nAdded the `KEEPTTL` option.\r\n*2\r\n$5\r\n6.2.0\r\n$42\r\nAdded the `GET`, `EXAT` and `PXAT` option.\r\n*2\r\n$5\r\n7.0.0\r\n$55\r\nAllowed the `NX` and `GET` options to be used together.\r\n$9\r\narguments\r\n*5\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n%2\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n%5\r\n$4\r\nname\r\n$9\r\ncondition\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n$5\r\nflags\r\n~1\r\n+optional\r\n$9\r\narguments\r\n*2\r\n%3\r\n$4\r\nname\r\n$2\r\nnx\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nNX\r\n%3\r\n$4\r\nname\r\n$2\r\nxx\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$2\r\nXX\r\n%5\r\n$4\r\nname\r\n$3\r\nget\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$3\r\nGET\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\nflags\r\n~1\r\n+optional\r\n%4\r\n$4\r\nname\r\n$10\r\nexpiration\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nflags\r\n~1\r\n+optional\r\n$9\r\narguments\r\n*5\r\n%4\r\n$4\r\nname\r\n$7\r\nseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nEX\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n%4\r\n$4\r\nname\r\n$12\r\nmilliseconds\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nPX\r\n$5\r\nsince\r\n$6\r\n2.6.12\r\n%4\r\n$4\r\nname\r\n$17\r\nunix-time-seconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$5\r\ntoken\r\n$4\r\nEXAT\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n%4\r\n$4\r\nname\r\n$22\r\nunix-time-milliseconds\r\n$4\r\ntype\r\n$9\r\nunix-time\r\n$5\r\ntoken\r\n$4\r\nPXAT\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n%4\r\n$4\r\nname\r\n$7\r\nkeepttl\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$7\r\nKEEPTTL\r\n$5\r\nsince\r\n$5\r\n6.0.0\r\n"),
    (3, "DOCS", "mset", b"%1\r\n$4\r\nmset\r\n%5\r\n$7\r\nsummary\r\n$36\r\nSet multiple keys to multiple values\r\n$5\r\nsince\r\n$5\r\n1.0.1\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$42\r\nO(N) where N is the number of keys to set.\r\n$9\r\narguments\r\n*1\r\n%4\r\n$4\r\nname\r\n$9\r\nkey_value\r\n$4\r\ntype\r\n$5\r\nblock\r\n$5\r\nflags\r\n~1\r\n+multiple\r\n$9\r\narguments\r\n*2\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n%2\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n"),
    (3, "DOCS", "del", b"%1\r\n$3\r\ndel\r\n%5\r\n$7\r\nsummary\r\n$12\r\nDelete a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$7\r\ngeneric\r\n$10\r\ncomplexity\r\n$288\r\nO(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).\r\n$9\r\narguments\r\n*1\r\n%4\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n$5\r\nflags\r\n~1\r\n+multiple\r\n"),
    (3, "DOCS", "client|kill", b"%1\r\n$11\r\nclient|kill\r\n%6\r\n$7\r\nsummary\r\n$31\r\nKill the connection of a client\r\n$5\r\nsince\r\n$5\r\n2.4.0\r\n$5\r\ngroup\r\n$10\r\nconnection\r\n$10\r\ncomplexity\r\n$48\r\nO(N) where N is the number of client connections\r\n$7\r\nhistory\r\n~5\r\n*2\r\n$6\r\n2.8.12\r\n$24\r\nAdded new filter format.\r\n*2\r\n$6\r\n2.8.12\r\n$12\r\n`ID` option.\r\n*2\r\n$5\r\n3.2.0\r\n$41\r\nAdded `master` type in for `TYPE` option.\r\n*2\r\n$5\r\n5.0.0\r\n$91\r\nReplaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility.\r\n*2\r\n$5\r\n6.2.0\r\n$15\r\n`LADDR` option.\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$6\r\nfilter\r\n$4\r\ntype\r\n$5\r\noneof\r\n$9\r\narguments\r\n*2\r\n%3\r\n$4\r\nname\r\n$7\r\nip:port\r\n$4\r\ntype\r\n$6\r\nstring\r\n$16\r\ndeprecated_since\r\n$6\r\n2.8.12\r\n%4\r\n$4\r\nname\r\n$10\r\nnew-format\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\nflags\r\n~1\r\n+multiple\r\n$9\r\narguments\r\n*6\r\n%5\r\n$4\r\nname\r\n$9\r\nclient-id\r\n$4\r\ntype\r\n$7\r\ninteger\r\n$5\r\ntoken\r\n$2\r\nID\r\n$5\r\nsince\r\n$6\r\n2.8.12\r\n$5\r\nflags\r\n~1\r\n+optional\r\n%6\r\n$4\r\nname\r\n$26\r\nnormal_master_slave_pubsub\r\n$4\r\ntype\r\n$5\r\noneof\r\n$5\r\ntoken\r\n$4\r\nTYPE\r\n$5\r\nsince\r\n$6\r\n2.8.12\r\n$5\r\nflags\r\n~1\r\n+optional\r\n$9\r\narguments\r\n*5\r\n%3\r\n$4\r\nname\r\n$6\r\nnormal\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$6\r\nNORMAL\r\n%4\r\n$4\r\nname\r\n$6\r\nmaster\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$6\r\nMASTER\r\n$5\r\nsince\r\n$5\r\n3.2.0\r\n%3\r\n$4\r\nname\r\n$5\r\nslave\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$5\r\nSLAVE\r\n%4\r\n$4\r\nname\r\n$7\r\nreplica\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$7\r\nREPLICA\r\n$5\r\nsince\r\n$5\r\n5.0.0\r\n%3\r\n$4\r\nname\r\n$6\r\npubsub\r\n$4\r\ntype\r\n$10\r\npure-token\r\n$5\r\ntoken\r\n$6\r\nPUBSUB\r\n%4\r\n$4\r\nname\r\n$8\r\nusername\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$4\r\nUSER\r\n$5\r\nflags\r\n~1\r\n+optional\r\n%4\r\n$4\r\nname\r\n$7\r\nip:port\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$4\r\nADDR\r\n$5\r\nflags\r\n~1\r\n+optional\r\n%5\r\n$4\r\nname\r\n$7\r\nip:port\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$5\r\nLADDR\r\n$5\r\nsince\r\n$5\r\n6.2.0\r\n$5\r\nflags\r\n~1\r\n+optional\r\n%4\r\n$4\r\nname\r\n$6\r\nyes/no\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\ntoken\r\n$6\r\nSKIPME\r\n$5\r\nflags\r\n~1\r\n+optional\r\n"),
    (3, "DOCS", "hset", b"%1\r\n$4\r\nhset\r\n%6\r\n$7\r\nsummary\r\n$36\r\nSet the string value of a hash field\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$4\r\nhash\r\n$10\r\ncomplexity\r\n$132\r\nO(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.\r\n$7\r\nhistory\r\n~1\r\n*2\r\n$5\r\n4.0.0\r\n$47\r\nAccepts multiple `field` and `value` arguments.\r\n$9\r\narguments\r\n*2\r\n%3\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n%4\r\n$4\r\nname\r\n$11\r\nfield_value\r\n$4\r\ntype\r\n$5\r\nblock\r\n$5\r\nflags\r\n~1\r\n+multiple\r\n$9\r\narguments\r\n*2\r\n%2\r\n$4\r\nname\r\n$5\r\nfield\r\n$4\r\ntype\r\n$6\r\nstring\r\n%2\r\n$4\r\nname\r\n$5\r\nvalue\r\n$4\r\ntype\r\n$6\r\nstring\r\n"),
    (3, "DOCS", "subscribe", b"%1\r\n$9\r\nsubscribe\r\n%5\r\n$7\r\nsummary\r\n$51\r\nListen for messages published to the given channels\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$6\r\npubsub\r\n$10\r\ncomplexity\r\n$55\r\nO(N) where N is the number of channels to subscribe to.\r\n$9\r\narguments\r\n*1\r\n%3\r\n$4\r\nname\r\n$7\r\nchannel\r\n$4\r\ntype\r\n$6\r\nstring\r\n$5\r\nflags\r\n~1\r\n+multiple\r\n"),
    (3, "DOCS", "publish", b"%1\r\n$7\r\npublish\r\n%5\r\n$7\r\nsummary\r\n$27\r\nPost a message to a channel\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$6\r\npubsub\r\n$10\r\ncomplexity\r\n$141\r\nO(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).\r\n$9\r\narguments\r\n*2\r\n%2\r\n$4\r\nname\r\n$7\r\nchannel\r\n$4\r\ntype\r\n$6\r\nstring\r\n%2\r\n$4\r\nname\r\n$7\r\nmessage\r\n$4\r\ntype\r\n$6\r\nstring\r\n"),
];

async fn connect(s: &resplock::ServerHandle, proto: u8) -> Raw {
    let mut c = Raw::connect(s).await;
    if proto == 3 {
        cmd!(c, "HELLO", "3");
    }
    c
}

async fn check_recorded(proto: u8, kind: &str) {
    let s = server().await;
    let mut c = connect(&s, proto).await;
    for (p, k, name, want) in RECORDED {
        if *p != proto || *k != kind {
            continue;
        }
        let got = cmd!(c, "COMMAND", kind, name);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(want),
            "RESP{proto} COMMAND {kind} {name}"
        );
    }
}

#[tokio::test]
async fn command_info_matches_redis_in_resp2() {
    check_recorded(2, "INFO").await;
}

#[tokio::test]
async fn command_info_matches_redis_in_resp3() {
    check_recorded(3, "INFO").await;
}

#[tokio::test]
async fn command_docs_matches_redis_in_resp2() {
    check_recorded(2, "DOCS").await;
}

#[tokio::test]
async fn command_docs_matches_redis_in_resp3() {
    check_recorded(3, "DOCS").await;
}

#[tokio::test]
async fn command_info_and_docs_follow_argument_order_with_nil_or_omission_for_unknown() {
    let s = server().await;
    let mut c = connect(&s, 2).await;
    let info = cmd!(c, "COMMAND", "INFO", "nosuch", "GET", "get");
    assert!(info.starts_with(b"*3\r\n$-1\r\n*10\r\n$3\r\nget\r\n"));
    let docs = cmd!(c, "COMMAND", "DOCS", "nosuch", "GET", "get");
    assert!(docs.starts_with(b"*4\r\n$3\r\nget\r\n*10\r\n"));
    let mut c3 = connect(&s, 3).await;
    assert_eq!(cmd!(c3, "COMMAND", "INFO", "nosuch"), b"*1\r\n_\r\n");
    assert_eq!(cmd!(c3, "COMMAND", "DOCS", "nosuch"), b"%0\r\n");
}

/// The names COMMAND LIST gives (every command and subcommand).
async fn implemented_names(s: &resplock::ServerHandle) -> Vec<String> {
    let mut c = connect(s, 2).await;
    let list = cmd!(c, "COMMAND", "LIST");
    let text = String::from_utf8(list).unwrap();
    let lines: Vec<&str> = text.split("\r\n").collect();
    lines
        .iter()
        .skip(1)
        .filter(|l| !l.is_empty() && !l.starts_with('$'))
        .map(|l| l.to_string())
        .collect()
}

#[tokio::test]
async fn every_implemented_command_has_recorded_metadata() {
    let s = server().await;
    let names = implemented_names(&s).await;
    assert!(names.len() > 50);
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| resplock::cmd::meta::get(n).is_none())
        .filter(|n| !resplock::cmd::meta::NOT_IN_REDIS.contains(&n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "no COMMAND INFO/DOCS metadata for {missing:?}: re-run conformance/tools/gen_command_meta.py"
    );
    // The recording covers all of redis-server's commands, and only its commands.
    assert!(resplock::cmd::meta::all().count() > 300);
    for n in resplock::cmd::meta::NOT_IN_REDIS {
        assert!(
            resplock::cmd::meta::get(n).is_none(),
            "{n} was recorded from redis"
        );
    }
}

#[tokio::test]
async fn command_without_metadata_still_gets_well_formed_replies() {
    let s = server().await;
    for proto in [2, 3] {
        let mut c = connect(&s, proto).await;
        for name in resplock::cmd::meta::NOT_IN_REDIS {
            let info = cmd!(c, "COMMAND", "INFO", name);
            let head = format!("*1\r\n*10\r\n${}\r\n{name}\r\n", name.len());
            assert!(info.starts_with(head.as_bytes()), "{name}: {info:?}");
            let docs = cmd!(c, "COMMAND", "DOCS", name);
            let head = if proto == 2 { "*2\r\n" } else { "%1\r\n" };
            assert!(docs.starts_with(head.as_bytes()), "{name}: {docs:?}");
        }
    }
}

/// Every command is found by its name in any case, through the short table or the map,
/// and a name differing by a byte, a trailing NUL or non-ASCII case finds nothing.
#[test]
fn lookup_finds_every_command_in_any_case_and_nothing_else() {
    let table = resplock::cmd::commands();
    for cmd in table.all_commands() {
        let upper = cmd.name.to_ascii_uppercase();
        assert!(std::ptr::eq(
            table.lookup(cmd.name.as_bytes()).unwrap(),
            cmd
        ));
        assert!(std::ptr::eq(table.lookup(upper.as_bytes()).unwrap(), cmd));
        let mut nul = cmd.name.as_bytes().to_vec();
        nul.push(0);
        assert!(table.lookup(&nul).is_none(), "{}", cmd.name);
        let mut off = cmd.name.as_bytes().to_vec();
        off[0] ^= 1;
        assert!(table
            .lookup(&off)
            .is_none_or(|c| c.name.as_bytes() == &off[..]));
    }
    for name in [
        &b""[..],
        b"g\xc3\xa9t",
        b"GE",
        b"getx",
        b"0123456789abcdefg",
    ] {
        assert!(table.lookup(name).is_none());
    }
}

/// A renamed command is found by its new name only, short or long.
#[test]
fn lookup_follows_rename_command() {
    let renamed = resplock::cmd::commands().renamed(&[
        ("get".into(), "fetch".into()),
        ("set".into(), "a-rather-long-name-for-set".into()),
    ]);
    assert!(renamed.lookup(b"GET").is_none());
    assert_eq!(renamed.lookup(b"Fetch").unwrap().name, "get");
    assert!(renamed.lookup(b"set").is_none());
    assert_eq!(
        renamed.lookup(b"A-RATHER-LONG-NAME-FOR-SET").unwrap().name,
        "set"
    );
}
