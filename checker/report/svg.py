"""The timeline picture: one lane per broker, one column per step, as inline SVG (no scripts, no fonts to fetch).

A filled box is an in-sync replica, a pale box a replica out of the ISR, a red box an ISR
member that is no longer a replica; a blue border
marks a replica being added, an orange one a replica being removed; the dot is the
leader; a grey cross a broker that is down. The violating step's column is outlined red.
"""

from __future__ import annotations

from html import escape

from kreassign.checker.traces.render import StepView

CELL_W, CELL_H, LEFT, TOP = 34, 22, 74, 40


def timeline_svg(views: list[StepView], partition: str) -> str:
    brokers: set[int] = set()
    for v in views:
        for r in v.rows:
            if r.label == partition:
                brokers |= set(r.cells["replicas"]) | set(r.cells["isr"])
        brokers |= {b for b in v.down if isinstance(b, int)}
    lanes = sorted(brokers)
    width = max(LEFT + CELL_W * len(views) + 10, 560)  # room for the legend
    height = TOP + CELL_H * len(lanes) + 30
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="replicas and leader of {escape(partition)} per step">')]
    out.append(f'<text x="4" y="{TOP - 8}" class="axis">step</text>')
    for k, b in enumerate(lanes):
        y = TOP + k * CELL_H
        out.append(f'<text x="4" y="{y + 15}" class="axis">broker {b}</text>')
    for s, v in enumerate(views):
        x = LEFT + s * CELL_W
        out.append(f'<text x="{x + 10}" y="{TOP - 8}" class="axis">{v.index}</text>')
        row = next((r for r in v.rows if r.label == partition), None)
        if row is None:
            continue
        c = row.cells
        for k, b in enumerate(lanes):
            y = TOP + k * CELL_H
            cls = []
            if b in c["replicas"]:
                cls.append("isr" if b in c["isr"] else "replica")
            elif b in c["isr"]:  # in the ISR but no longer a replica: isr_in_replicas broken
                cls.append("stray")
            if b in c["adding"]:
                cls.append("adding")
            if b in c["removing"]:
                cls.append("removing")
            if cls:
                out.append(f'<rect x="{x + 3}" y="{y + 2}" width="{CELL_W - 6}" height="{CELL_H - 4}" rx="3" '
                           f'class="{" ".join(cls)}"><title>step {v.index}: broker {b} {" ".join(cls)}</title></rect>')
            if b == c["leader"]:
                out.append(f'<circle cx="{x + CELL_W / 2}" cy="{y + CELL_H / 2}" r="5" class="leader">'
                           f'<title>step {v.index}: leader {b}</title></circle>')
            if b in v.down:
                out.append(f'<path d="M{x + 8} {y + 5} L{x + CELL_W - 8} {y + CELL_H - 5} M{x + CELL_W - 8} {y + 5} '
                           f'L{x + 8} {y + CELL_H - 5}" class="down"><title>step {v.index}: broker {b} down</title></path>')
        if row.violating:
            out.append(f'<rect x="{x + 1}" y="{TOP - 2}" width="{CELL_W - 2}" height="{CELL_H * len(lanes) + 4}" '
                       f'class="violating-step"/>')
    y = TOP + CELL_H * len(lanes) + 18
    legend = [("isr", "in ISR"), ("replica", "not in ISR"), ("replica adding", "adding"),
              ("replica removing", "removing"), ("stray", "ISR, not a replica")]
    x = 4
    for cls, text in legend:
        out.append(f'<rect x="{x}" y="{y - 10}" width="14" height="12" rx="2" class="{cls}"/>'
                   f'<text x="{x + 18}" y="{y}" class="axis">{text}</text>')
        x += 24 + 7 * len(text)
    out.append(f'<circle cx="{x + 6}" cy="{y - 4}" r="5" class="leader"/><text x="{x + 14}" y="{y}" class="axis">leader</text>')
    out.append("</svg>")
    return "".join(out)
