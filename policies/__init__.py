"""Pure, synchronous, deterministic decision functions: normalization, secrets, quality, labels,
tags, topic keys, the pipeline that judges an item, bank config arithmetic. No I/O (checked)."""
