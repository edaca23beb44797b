"""The inspector: the widget a person steps through a run with, its picture, step list, playback,
subruns and the snapshot kept for untrusted copies."""
