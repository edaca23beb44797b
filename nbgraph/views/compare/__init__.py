"""Two runs compared in one view: one step control, the first difference, the fields that differ."""
