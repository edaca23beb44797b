"""A value shown in a panel or table is read only as far as it is shown: a 10 MB str is
not turned whole into its repr, a 600,000-item dict not listed whole, at every step."""

from nbgraph.views.panels.table_view import _cell
from nbgraph.views.panels.value_tree import COPY_CHARS, value_tree_html


def test_a_long_text_is_shown_from_its_beginning_without_its_whole_repr(monkeypatch):
    import nbgraph.record.text as text
    import nbgraph.views.panels.value_tree as tree

    lengths = []
    for module in (text, tree):
        real = module.safe_repr

        def counted(value, real=real):
            lengths.append(len(value) if isinstance(value, str) else 0)
            return real(value)

        monkeypatch.setattr(module, "safe_repr", counted)
    value = "x" * 10_000_000
    html = value_tree_html(value, 80)
    assert f"{10_000_000 - COPY_CHARS:,} more characters" in html
    assert len(html) < 3 * COPY_CHARS
    assert len(_cell(value)) < 200
    assert lengths and max(lengths) <= COPY_CHARS + 1  # (never the whole 10 MB)


def test_a_large_dict_is_listed_from_its_first_items():
    value = {i: i for i in range(600_000)}
    html = value_tree_html(value, 80)
    assert "599900 more" in html
    assert len(html) < 100_000
