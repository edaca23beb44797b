"""A notebook reopened without the kernel that made its widgets shows them from the state
saved in the file; the front-end's next save wrote only widgets with a live kernel (an empty
state, then "model not found" on the reopen after it). The picture's module makes that save
keep every widget an output still shows (`views/static/clickable_graph.js`,
`keepShownWidgetState`), run here in node on a stand-in for JupyterLab's widget manager;
`tests/e2e/test_browser_reopen.py` does it in the browser."""

import json
import shutil
import subprocess

import pytest

from nbgraph.views.clickable_graph import STATIC

PROGRAM = """
const { default: picture } = await import(process.argv[1]);
function model(id, live, attributes = {}) {
  return { model_id: id, _comm_live: live, attributes,
           get comm_live() { return this._comm_live; } };
}
const child = model("child", false);
const layout = model("layout", false);
const shown = model("shown", false, { children: [child], layout, value: "<svg/>" });
const models = new Map([
  ["live", model("live", true)], ["shown", shown], ["child", child], ["layout", layout],
  ["gone", model("gone", false)],  // no output shows it
]);
const view = id => ({ output_type: "display_data",
  data: { "application/vnd.jupyter.widget-view+json": { model_id: id } } });
const cells = [
  { outputs: [view("live"), { output_type: "stream" }] },
  { outputs: [view("shown")] },
];
const manager = {
  _modelsSync: models,
  _context: { model: { toJSON: () => ({ cells }) } },
  get_state_sync() {  // as jupyterlab_widgets 3.0: the models with a live comm
    return [...this._modelsSync.values()].filter(m => m.comm_live).map(m => m.model_id);
  },
};
const before = manager.get_state_sync();
picture.initialize({ model: { widget_manager: manager } });
picture.initialize({ model: { widget_manager: manager } });  // (once per manager)
const after = manager.get_state_sync();
console.log(JSON.stringify({ before, after, still_dead: shown.comm_live || child.comm_live }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the module")
def test_a_save_keeps_the_widgets_an_output_still_shows():
    module = (STATIC / "clickable_graph.js").as_uri()
    done = subprocess.run(
        ["node", "--input-type=module", "-e", PROGRAM, module],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    saved = json.loads(done.stdout)
    assert saved["before"] == ["live"]  # what the front-end saved: the rest was lost
    assert sorted(saved["after"]) == ["child", "layout", "live", "shown"]  # not "gone"
    assert saved["still_dead"] is False  # the models stay as they were after the save
