"""What a node sees while it runs: the arguments its signature asks for, its `Runtime`
and environment, its stream writer, its store (each read and write kept) and its
interrupts' answers."""
