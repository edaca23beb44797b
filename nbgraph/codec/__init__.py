"""The value codec: state values to tagged JSON data and back, never pickle (docs/VALUES.md).

`values` encodes, `decoding` reads back, `classes` resolves class names without importing,
`placeholders` stands in for what cannot be rebuilt, `nesting` bounds how deep data may go.
The checkpoint savers and the run files both store values through it.
"""
