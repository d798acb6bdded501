package model

import (
	"context"
	"fmt"

	"github.com/edgeproof/rlharness/claimcheck"
	"github.com/edgeproof/rlharness/harness/result"
)

// The claim-check document's runs (004: olc.mjs) and K01-scale inputs (bedel.mjs).
const (
	ClaimEvents   = 100_000  // olc.mjs: delivery events per run
	ClaimSeed     = 20260730 // olc.mjs: the generator's seed
	K01Shipments  = 400_000  // K01 V3: shipments (and delivery events) per day
	K01PeakFactor = 3        // K01 V8
	K01WriteMbit  = 0.17     // K01: write ingress, Mbit/s
	K01GrowthMB   = 976      // K01: daily growth, MB
	K01StorageGB  = 712.48   // K01: storage, GB
	K03Backlog    = 525_000  // M19/K03: peak queue backlog, events
	K03ProofShare = 7        // M19/K03: 1 in 7 backlog events carries a proof
	secondsPerDay = 86_400
	daysPerYear   = 365
)

// ClaimCrashPlan is the fault window's draws as kuyruk.mjs makes them from one generator:
// the first n values decide the producer's crash for events 0…n−1 in order, the next ones
// the consumer's crash on the first delivery of each event that reached the queue, in
// queue order. A real run injects exactly these crashes, so its counts can be set beside
// the model's for the same events.
type ClaimCrashPlan struct {
	Producer []bool // by event ID
	Consumer []bool // by event ID: crash after processing its first delivery, before the ack
}

// NewClaimCrashPlan draws the plan for n events.
func NewClaimCrashPlan(n int, producerP, consumerP float64, seed uint32) ClaimCrashPlan {
	rnd := NewLCG(seed)
	p := ClaimCrashPlan{Producer: make([]bool, n), Consumer: make([]bool, n)}
	for i := range n {
		p.Producer[i] = rnd.Float64() < producerP
	}
	for i := range n {
		if !p.Producer[i] {
			p.Consumer[i] = rnd.Float64() < consumerP
		}
	}
	return p
}

// RunClaim is kuyruk.mjs's kos with the project's producer and consumer: every event
// produced in order, then the queue drained, a crashed delivery going to the back.
func RunClaim(s result.ClaimSettings) (result.ClaimCounts, error) {
	ctx := context.Background()
	if s.N < 0 {
		return result.ClaimCounts{}, fmt.Errorf("events must be >= 0 (got %d)", s.N)
	}
	if s.Placement == claimcheck.Attach {
		s.Deletion = ""
	}
	out := result.ClaimCounts{ClaimSettings: s, ClaimTally: result.ClaimTally{MessageBytes: claimcheck.MessageBytes(s.Placement)}}
	rnd := NewLCG(s.Seed)
	q := &claimcheck.MemoryQueue{}
	store := claimcheck.NewMemoryStore()
	prod := &claimcheck.Producer{Placement: s.Placement, Queue: q, Store: store}
	cons := &claimcheck.Consumer{Placement: s.Placement, Deletion: s.Deletion, Store: store}
	if s.Ledger {
		cons.Ledger = claimcheck.NewMemoryLedger()
	}
	queued := make([]bool, s.N)
	for i := range s.N {
		id := uint64(i)
		err := prod.Produce(ctx, claimcheck.Event{ID: id}, claimcheck.Proof{},
			func() bool { return rnd.Float64() < s.ProducerCrash })
		switch {
		case err == claimcheck.ErrCrashed:
			out.ProducerDied++
		case err != nil:
			return out, err
		default:
			queued[i] = true
		}
	}
	crash := func(d claimcheck.Delivery) bool { return rnd.Float64() < s.ConsumerCrash && d.Attempt == 0 }
	for {
		d, ok := q.Next()
		if !ok {
			break
		}
		o, err := cons.Handle(ctx, d, crash)
		if err != nil {
			return out, err
		}
		switch o {
		case claimcheck.Processed:
			out.Processed++
		case claimcheck.Crashed:
			out.Processed++
			out.ConsumerDied++
			q.Redeliver(d)
		case claimcheck.Duplicate:
			out.Duplicates++
		case claimcheck.Dangling:
			out.Dangling++
		case claimcheck.Corrupt:
			return out, fmt.Errorf("event %d: the model's store returned a corrupt payload", d.Message.Event.ID)
		}
	}
	out.Deliveries, out.CarriedBytes = q.Deliveries, q.Bytes
	out.LeftInStore = store.Len()
	// Orphans are found as the real run finds them: payloads no message refers to.
	store.Keys(func(key string) {
		if id, ok := claimcheck.ParseProofKey(key); ok && id < uint64(s.N) && !queued[id] {
			out.Orphans++
		}
	})
	for i := range s.N {
		if !queued[i] && s.Placement == claimcheck.Attach {
			out.Lost++
		}
	}
	return out, nil
}

// ClaimSetting is one placement + deletion row of olc.mjs.
type ClaimSetting struct {
	Placement claimcheck.Placement `json:"placement"`
	Deletion  claimcheck.Deletion  `json:"deletion,omitempty"`
}

// ClaimSettingsRows are olc.mjs's three rows, in its order.
var ClaimSettingsRows = []ClaimSetting{
	{claimcheck.Attach, ""},
	{claimcheck.Claim, claimcheck.Immediate},
	{claimcheck.Claim, claimcheck.TTL},
}

// Name is the row's label: "attach", "claim immediate", "claim ttl".
func (s ClaimSetting) Name() string {
	if s.Deletion == "" {
		return string(s.Placement)
	}
	return string(s.Placement) + " " + string(s.Deletion)
}

// ClaimDay is one of olc.mjs's two tables: every setting under one fault condition.
type ClaimDay struct {
	Name          string               `json:"name"`
	ProducerCrash float64              `json:"producer_crash_p"`
	ConsumerCrash float64              `json:"consumer_crash_p"`
	Rows          []result.ClaimCounts `json:"rows"`
}

// CostRow is one placement at K01 scale (bedel.mjs's first table).
type CostRow struct {
	Placement    claimcheck.Placement `json:"placement"`
	MessageBytes int                  `json:"message_bytes"`
	QueueMbit    float64              `json:"queue_mbit_s"`
	TimesIngress float64              `json:"times_k01_write_ingress"`
	BacklogMB    float64              `json:"backlog_mb"`
}

// TTLRow is one DD11 time-to-live at K01 scale (bedel.mjs's second table).
type TTLRow struct {
	Days          int     `json:"days"`
	Proofs        int     `json:"proofs_in_store"`
	GB            float64 `json:"gb_in_store"`
	PctStorage    float64 `json:"pct_k01_storage"`
	TimesGrowthMB float64 `json:"times_daily_growth"`
}

// Cost is bedel.mjs: the measured message bytes and fault rates at K01 scale.
type Cost struct {
	PeakEvents       float64   `json:"peak_events_per_s"`
	Placements       []CostRow `json:"placements"`
	QueueRatio       float64   `json:"queue_byte_ratio"`
	BacklogProofs    int       `json:"backlog_proof_messages"`
	TTL              []TTLRow  `json:"ttl"`
	DanglingPerDay   float64   `json:"dangling_per_day"`
	OrphansPerDay    float64   `json:"orphans_per_day"`
	OrphanMBPerDay   float64   `json:"orphan_mb_per_day"`
	OrphanGBPerYear  float64   `json:"orphan_gb_per_year_without_ttl"`
	LostPerDayAttach float64   `json:"lost_per_day_attach"`
}

// ClaimModel holds every table of the claim-check document.
type ClaimModel struct {
	AttachBytes int        `json:"attach_message_bytes"`
	ClaimBytes  int        `json:"claim_message_bytes"`
	Days        []ClaimDay `json:"days"`
	Cost        Cost       `json:"cost"`
}

// RunClaimCheck runs olc.mjs's two tables and bedel.mjs's cost from them.
func RunClaimCheck() (ClaimModel, error) {
	m := ClaimModel{
		AttachBytes: claimcheck.MessageBytes(claimcheck.Attach),
		ClaimBytes:  claimcheck.MessageBytes(claimcheck.Claim),
	}
	days := []ClaimDay{
		{Name: "fault-free"},
		{Name: "fault window (DD10)", ProducerCrash: claimcheck.ProducerCrashP, ConsumerCrash: claimcheck.ConsumerCrashP},
	}
	for _, d := range days {
		for _, row := range ClaimSettingsRows {
			c, err := RunClaim(result.ClaimSettings{N: ClaimEvents, Placement: row.Placement, Deletion: row.Deletion,
				ProducerCrash: d.ProducerCrash, ConsumerCrash: d.ConsumerCrash, Seed: ClaimSeed})
			if err != nil {
				return m, err
			}
			d.Rows = append(d.Rows, c)
		}
		m.Days = append(m.Days, d)
	}
	// bedel.mjs takes its dangling and orphan rates from the fault window's claim +
	// immediate-delete row, and the events lost with the proof attached from its attach row.
	attach, claim := m.Days[1].Rows[0], m.Days[1].Rows[1]
	m.Cost = RunCost(m.AttachBytes, m.ClaimBytes, FaultRates{
		Dangling: float64(claim.Dangling) / float64(claim.N),
		Orphans:  float64(claim.Orphans) / float64(claim.N),
		Lost:     float64(attach.Lost) / float64(attach.N),
	})
	return m, nil
}

// FaultRates are the fault window's outcomes per delivery event: dangling claims and orphan
// payloads with a claim and immediate delete, events lost with the proof attached.
type FaultRates struct {
	Dangling, Orphans, Lost float64
}

// RunCost is bedel.mjs: message bytes to queue rate and backlog, DD11 to storage, and the
// fault window's rates to dangling claims, orphans and lost events per day.
func RunCost(attachBytes, claimBytes int, r FaultRates) Cost {
	peak := float64(K01Shipments) / secondsPerDay * K01PeakFactor
	c := Cost{
		PeakEvents:    peak,
		QueueRatio:    float64(attachBytes) / float64(claimBytes),
		BacklogProofs: K03Backlog / K03ProofShare,
	}
	for _, p := range []struct {
		pl claimcheck.Placement
		b  int
	}{{claimcheck.Attach, attachBytes}, {claimcheck.Claim, claimBytes}} {
		mbit := peak * float64(p.b) * 8 / 1e6
		c.Placements = append(c.Placements, CostRow{Placement: p.pl, MessageBytes: p.b, QueueMbit: mbit,
			TimesIngress: mbit / K01WriteMbit,
			BacklogMB:    float64(K03Backlog) / K03ProofShare * float64(p.b) / 1e6})
	}
	for _, days := range []int{1, 7, 30} {
		n := K01Shipments * days
		gb := float64(n) * claimcheck.ProofBytes / 1e9
		c.TTL = append(c.TTL, TTLRow{Days: days, Proofs: n, GB: gb,
			PctStorage: 100 * gb / K01StorageGB, TimesGrowthMB: gb * 1000 / K01GrowthMB})
	}
	c.DanglingPerDay = K01Shipments * r.Dangling
	c.OrphansPerDay = K01Shipments * r.Orphans
	c.OrphanMBPerDay = K01Shipments * r.Orphans * claimcheck.ProofBytes / 1e6
	c.OrphanGBPerYear = K01Shipments * r.Orphans * claimcheck.ProofBytes * daysPerYear / 1e9
	c.LostPerDayAttach = K01Shipments * r.Lost
	return c
}
