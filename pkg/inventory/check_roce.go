package inventory

// The lossless RoCE rules: DSCP and priorities, ECN thresholds, buffer share.

import "math"

func (c *checker) roce(r *RoCESpec) {
	if r == nil {
		r = &RoCESpec{}
	}
	q := &c.inv.RoCE
	q.DSCP = c.intIn("roce.dscp", r.DSCP, DefaultDSCP, 0, 63, "DSCP is 6 bits")
	q.Priority = c.intIn("roce.priority", r.Priority, DefaultPriority, 0, 7, "switch priorities are 0–7")
	q.CNPDSCP = c.intIn("roce.cnp_dscp", r.CNPDSCP, DefaultCNPDSCP, 0, 63, "DSCP is 6 bits")
	q.CNPPriority = c.intIn("roce.cnp_priority", r.CNPPriority, DefaultCNPPriority, 0, 7, "switch priorities are 0–7")
	q.ECNMinKB = c.intIn("roce.ecn_min_kb", r.ECNMinKB, DefaultECNMinKB, 1, 1<<20, "KB")
	q.ECNMaxKB = c.intIn("roce.ecn_max_kb", r.ECNMaxKB, DefaultECNMaxKB, 1, 1<<20, "KB")
	q.BufferPercent = DefaultBufferPercent
	if r.BufferPercent != nil {
		q.BufferPercent = *r.BufferPercent
		switch {
		case math.IsNaN(q.BufferPercent) || math.IsInf(q.BufferPercent, 0):
			// Only Go can make these (Build): the decoder reads .nan and
			// .inf as numbers and leaves them to this rule.
			c.errf("roce.buffer_percent", "must be a finite number, not %v", q.BufferPercent)
		case q.BufferPercent < 1 || q.BufferPercent > 100:
			c.errf("roce.buffer_percent", "%g is outside 1–100 (percent of switch buffer memory)", q.BufferPercent)
		}
	}
	// The NIC, not rdggen, stamps its CNPs: the ConnectX PF belongs to
	// ESXi's nmlx5_core, whose module parameters have no CNP DSCP or
	// priority, and the VF in the VM cannot set them; only the firmware's
	// CNP_DSCP_P1 / CNP_802P_PRIO_P1 (mlxconfig on the ESXi host, then a
	// reboot) could. So the switch must expect the NIC's defaults
	// (docs/rules.md#cnp-dscp-and-priority).
	if q.CNPDSCP != DefaultCNPDSCP && inRange(q.CNPDSCP, 0, 63) {
		c.errf("roce.cnp_dscp", "%d: the NIC sends its CNPs with DSCP %d, and rdggen cannot change that here (the PF belongs to ESXi's nmlx5_core, which has no CNP setting; only mlxconfig CNP_DSCP_P1 on the ESXi host could); keep %d",
			q.CNPDSCP, DefaultCNPDSCP, DefaultCNPDSCP)
	}
	if q.CNPPriority != DefaultCNPPriority && inRange(q.CNPPriority, 0, 7) {
		c.errf("roce.cnp_priority", "%d: the NIC sends its CNPs at priority %d (DSCP %d), and rdggen cannot change that here (only mlxconfig CNP_802P_PRIO_P1 on the ESXi host could); keep %d",
			q.CNPPriority, DefaultCNPPriority, DefaultCNPDSCP, DefaultCNPPriority)
	}
	// The CNPs' class is the NIC's priority 6 (above), so the RoCE data
	// cannot use it: CNPs need their own strict-priority class. The finding
	// is on roce.priority, the key that can change.
	cnpClass := q.Priority == DefaultCNPPriority
	if cnpClass {
		c.errf("roce.priority", "%d is roce.cnp_priority, the NIC's CNP priority: CNPs need their own strict-priority class apart from the lossless RoCE class; use another priority (the default is %d, with DSCP %d)",
			q.Priority, DefaultPriority, DefaultDSCP)
	}
	if q.ECNMinKB > q.ECNMaxKB {
		c.errf("roce.ecn_min_kb", "%d KB is above ecn_max_kb %d KB (ECN marking starts at the minimum)", q.ECNMinKB, q.ECNMaxKB)
	}
	// ONYX (trust L3) and mlx5 map DSCP to switch priority as DSCP/8 by default;
	// rdggen does not rewrite that map, so the data's pair must agree (the
	// CNPs' pair is the NIC's 48 and 6, which do). Not said for the CNPs'
	// priority: its DSCPs are the CNPs'.
	if q.DSCP>>3 != q.Priority && !cnpClass && inRange(q.DSCP, 0, 63) && inRange(q.Priority, 0, 7) {
		c.errf("roce.dscp", "DSCP %d maps to switch priority %d by default (DSCP/8), not roce.priority %d; use a DSCP in %d–%d",
			q.DSCP, q.DSCP>>3, q.Priority, q.Priority*8, q.Priority*8+7)
	}
}
