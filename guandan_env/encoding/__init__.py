"""What learners and tools read from a game: the observation encoder, action and candidate
features, hand plans, the typed event record, bit-packing and the competition protocol's
messages. Built on ``core`` only."""
