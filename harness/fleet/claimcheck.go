package fleet

import "strconv"

// TargetClaimCheck is the claim-check pipeline, targets/cmd/claimcheck: replica 0 is the
// producer (its URL takes POST /events), the others are consumers in the stream's
// consumer group. Placement, deletion and timeouts come from Spec.ExtraEnv
// (CLAIMCHECK_PLACEMENT, CLAIMCHECK_DELETION, CLAIMCHECK_TTL, CLAIMCHECK_VISIBILITY).
// A member killed by an injected crash exits on its own; Start brings it back on the
// same address.
const TargetClaimCheck = "claimcheck"

// claimCheckArgs is a claim-check process's command line: its node index decides its role.
func (s Spec) claimCheckArgs(args []string, i int, redis string) []string {
	return append(args,
		"--node-index", strconv.Itoa(i),
		"--node-count", strconv.Itoa(s.Replicas),
		"--producers", "1",
		"--redis", redis,
	)
}
