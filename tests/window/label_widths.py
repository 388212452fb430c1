"""Whether the sidebar is wide enough for every label the add-on's panels draw.

``sessions/window_ui.py`` records each panel's layout as Blender 3.4 builds it
(``UILayout.introspect()``: rows, columns, splits, boxes and buttons with their text) and the
width of each text in the UI font (``blf``). Blender then lays the panel out and cuts any text
that does not fit with an ellipsis ("Chain Le…"); that result is not visible to Python, so this
module redoes the layout the way Blender does it for a panel (``ui_litem_layout_*`` in
``interface_layout.cc``):

* a column, a box or an overlap (a list row) gives each item its whole width, a box less its
  inset;
* a split (every split in these panels is a property split) gives its label column 0.4 of the
  width and the rest to the value;
* a row gives icon-only items one unit each and shares the rest between the others in
  proportion to their estimated widths (in a panel every text button is estimated at ten units).

A text fits when its item is at least its width plus the margins, icon and arrow the item draws
around it (``PAD_UNITS``, by button type; an icon cannot be read from the layout, so buttons
are assumed to have one). It errs on the wide side: at the 229 px sidebar Blender opens with,
it flags every text Blender drew cut there and a few that Blender drew whole with a few pixels
to spare (``test_window_ui`` checks the first half of that on every run).
"""

from __future__ import annotations

from dataclasses import dataclass

UNIT_PX_AT_72_DPI = 20  # Blender's widget unit
TEXT_ESTIMATE_UNITS = 10  # a text button's estimated width in a panel's rows
PROPERTY_SPLIT = 0.4  # UI_ITEM_PROP_SEP_DIVIDE: the label column's share of a property split
# The sidebar's width outside its panels' layouts: the tab strip and the panel margins (the full
# width row "Solve Now | Bake" spans 364 px of a 420 px sidebar at 75 dpi).
CHROME_UNITS = 2.7
BOX_INSET_UNITS = 0.5
LIST_ROW_EXTRA_UNITS = 1.5  # a list row's icon and the list's scroll gutter

LABEL, BUTTON, NUMBER, SLIDER, TEXT, CHECKBOX, MENU, SEARCH = 10240, 512, 3072, 3584, 1536, 6656, 2048, 20992
# Units around a button's text, by its type (introspect's "type": Blender's eButType): margins,
# an icon, a menu's arrow, a search field's icon and clear button.
PAD_UNITS = {LABEL: 0.5, NUMBER: 0.5, SLIDER: 0.5, TEXT: 0.5, BUTTON: 1.5, CHECKBOX: 1.5, MENU: 2.5, SEARCH: 3.0}
OTHER_PAD_UNITS = 2.0


@dataclass(frozen=True)
class Text:
    text: str
    given_px: float
    needed_px: float

    @property
    def cut(self) -> bool:
        return self.given_px < self.needed_px

    def __str__(self) -> str:
        return f"{self.text!r} gets {self.given_px:.0f} px, needs {self.needed_px:.0f}"


def texts_in(layout: list[dict], sidebar_px: float, dpi: float) -> list[Text]:
    """Every text of a panel's recorded layout, with the width it gets in a sidebar
    ``sidebar_px`` wide and the width it needs."""
    unit = UNIT_PX_AT_72_DPI * dpi / 72.0
    found: list[Text] = []
    for item in layout:
        _allocate(item, sidebar_px - CHROME_UNITS * unit, unit, found, in_list=False)
    return found


def cut_texts(panels: dict[str, list[dict]], sidebar_px: float, dpi: float) -> list[str]:
    """``panel: text gets .. px, needs ..`` for each text of ``panels`` that would be cut."""
    return [
        f"{panel}: {text}" for panel, layout in panels.items() for text in texts_in(layout, sidebar_px, dpi) if text.cut
    ]


def _icon_only(item: dict) -> bool:
    if "items" not in item:
        return not item.get("draw_string")
    return all(_icon_only(child) for child in item["items"])


def _estimate_units(item: dict) -> float:
    if "items" not in item:
        return 1.0 if not item.get("draw_string") else TEXT_ESTIMATE_UNITS
    children = [_estimate_units(child) for child in item["items"]] or [0.0]
    return sum(children) if item["type"] == "LAYOUT_ROW" else max(children)


def _icon_width(item: dict, unit: float) -> float:
    if "items" not in item:
        return unit
    children = [_icon_width(child, unit) for child in item["items"]] or [0.0]
    return sum(children) if item["type"] == "LAYOUT_ROW" else max(children)


def _allocate(item: dict, width: float, unit: float, found: list[Text], *, in_list: bool) -> None:
    if "items" not in item:
        if item.get("draw_string"):
            pad = PAD_UNITS.get(item["type"], OTHER_PAD_UNITS) + (LIST_ROW_EXTRA_UNITS if in_list else 0.0)
            found.append(Text(item["draw_string"], width, item["text_px"] + pad * unit))
        return
    children, kind = item["items"], item["type"]
    in_list = in_list or kind == "LAYOUT_OVERLAP"
    if kind == "LAYOUT_ROW":
        fixed = sum(_icon_width(child, unit) for child in children if _icon_only(child))
        free = [child for child in children if not _icon_only(child)]
        total = sum(_estimate_units(child) for child in free)
        for child in free:
            _allocate(child, (width - fixed) * _estimate_units(child) / total, unit, found, in_list=in_list)
    elif kind == "LAYOUT_SPLIT" and len(children) > 1:
        _allocate(children[0], width * PROPERTY_SPLIT, unit, found, in_list=in_list)
        for child in children[1:]:
            share = width * (1.0 - PROPERTY_SPLIT) / (len(children) - 1)
            _allocate(child, share, unit, found, in_list=in_list)
    else:
        inner = width - BOX_INSET_UNITS * unit if kind == "LAYOUT_BOX" else width
        for child in children:
            _allocate(child, inner, unit, found, in_list=in_list)
