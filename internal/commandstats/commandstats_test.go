package commandstats

import "testing"

func TestParseLeavesOutScriptsAndTheHarness(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_evalsha:calls=400,usec=900,usec_per_call=2.25,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_eval:calls=2,usec=10,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_ping:calls=3,usec=1,usec_per_call=0.33,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hincrby:calls=4800,usec=900,usec_per_call=0.19,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_time:calls=100,usec=9,usec_per_call=0.09,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_exists:calls=50,usec=9,usec_per_call=0.18,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=7,usec=9,usec_per_call=1.29,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_config|resetstat:calls=1,usec=9,usec_per_call=9.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_flushall:calls=1,usec=9,usec_per_call=9.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_memory|usage:calls=200,usec=9,usec_per_call=0.05,rejected_calls=0,failed_calls=0\r\n"
	for _, tt := range []struct {
		name         string
		internal     Set
		touches, ops int64
	}{
		{"our scripts and redis_rate's", NewSet("HINCRBY", "exists", "time"), 405, 5355},
		{"nothing internal", NewSet(), 5355, 5355},
		{"every command internal", NewSet("evalsha", "eval", "ping", "hincrby", "time", "exists"), 0, 5355},
	} {
		touches, ops, err := Parse(info, tt.internal)
		if err != nil || touches != tt.touches || ops != tt.ops {
			t.Errorf("%s: touches %d ops %d (%v), want %d and %d", tt.name, touches, ops, err, tt.touches, tt.ops)
		}
	}
	if _, _, err := Parse("cmdstat_get:calls=x,usec=1\r\n", nil); err == nil {
		t.Error("a malformed count was accepted")
	}
}
