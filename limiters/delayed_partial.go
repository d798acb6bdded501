package limiters

import (
	"errors"
	"time"
)

// partial handles an exchange the store completed for some entries only (a
// PartialExchangeError, as when one shard of a cluster is down): the failed entries go back
// to pending, as after a failed exchange, and the others are applied as after a full one,
// so no count is lost and none is pushed twice. It reports whether err was such an error.
// Caller holds n.syncMu.
func (n *DelayedSync) partial(err error, now time.Time) bool {
	var pe *PartialExchangeError
	if !errors.As(err, &pe) {
		return false
	}
	batch, keys := n.batch, n.keys
	isFailed := make([]bool, len(batch))
	for _, i := range pe.Failed {
		if i >= 0 && i < len(batch) {
			isFailed[i] = true
		}
	}
	var failedB, doneB []SyncEntry
	var failedK, doneK []stateKey
	for i := range batch {
		if isFailed[i] {
			failedB, failedK = append(failedB, batch[i]), append(failedK, keys[i])
		} else {
			doneB, doneK = append(doneB, batch[i]), append(doneK, keys[i])
		}
	}
	n.batch, n.keys = failedB, failedK
	n.restore()
	n.batch, n.keys = doneB, doneK
	n.apply(now)
	n.batch, n.keys = batch, keys
	return true
}
