package result

// RoundClass holds the results of a StorageClass qualification (storbench
// qualify --class): one result per check ("check:NAME") and one per timed
// stage ("NAME/STAGE"), durations as write completion latency figures.
const RoundClass = "class"

// Labels of a class qualification's results.
const (
	// LabelCheckOutcome is how a check ended: "works", "not supported
	// (declared)", "not supported (measured)", "failed" or "skipped".
	LabelCheckOutcome LabelKey = "check_outcome"
	// LabelCheckReason is why, or what was seen.
	LabelCheckReason LabelKey = "check_reason"
	// LabelDeclared is what the StorageClass, CSIDriver, CSINodes and
	// VolumeSnapshotClasses declare, as "key=value" pairs.
	LabelDeclared LabelKey = "declared"
	// LabelProfile is the qualification's profile ("quick", "full").
	LabelProfile LabelKey = "profile"
)
