"""The run folder's pages (``defects``, ``porting``, ``support``, ``conformance``; ``.html`` and ``.md``)
rendered from the Jinja2 templates of ``interop/reporting/templates/``, and the links between them.

One :class:`jinja2.Environment` (:func:`render`): HTML templates (``*.html.j2``) are autoescaped,
every value written as :func:`html.escape` writes it (``&quot;`` and ``&#x27;`` for quotes, so that
an attribute in either quote stays one), a value already marked safe (:class:`markupsafe.Markup`:
a rendered link list, the navigation) as it is; Markdown templates (``*.md.j2``) are not, their
record-borne text goes through :mod:`.text_escape`'s filters (``md``, ``code``, ``anchor``,
``controls``). A key the template reads that the context lacks is an error
(:class:`jinja2.StrictUndefined`), never an empty string.

:func:`nav_html` is the links between a run's pages (:data:`NAV`), at the top of each HTML page.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Iterable

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_eval_context, select_autoescape
from markupsafe import Markup

from . import text_escape

__all__ = ["render", "macro", "nav_html", "NAV", "NAV_OPTIONAL", "TEMPLATES", "environment"]

#: the templates' folder (shipped with the package: pyproject's package-data)
TEMPLATES = Path(__file__).resolve().parent / "templates"

#: the run's other pages, linked from the top of each (the published site holds the same names)
NAV = (("support.html", "Support matrix"), ("porting.html", "Porting readiness"), ("defects.html", "Defects"),
       ("conformance.html", "ONNX conformance"))
#: pages only some runs have, linked once ``porting.link_run_pages`` finds them (the ONNX conformance
#: scoreboard: a run of onnx's backend tests); a page written before that names them without a link
NAV_OPTIONAL = ("conformance.html",)


@pass_eval_context
def _finalize(eval_ctx: Any, value: Any) -> Any:
    """Each ``{{ value }}`` of an autoescaped template as :func:`html.escape` writes it (a
    :class:`Markup` value as it is); a Markdown template's as it is."""
    if eval_ctx.autoescape and not hasattr(value, "__html__"):
        return Markup(html.escape(str(value)))
    return value


def _code(value: Any, table: bool = False) -> str:
    return text_escape.code(value, table=table)


def environment() -> Environment:
    """The pages' environment: autoescaping for ``*.html.j2`` (and a template made from a string),
    none for ``*.md.j2``; undefined keys fail; a block tag's line leaves no line behind."""
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                      autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True,
                                                   default=False),
                      undefined=StrictUndefined, finalize=_finalize, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True, auto_reload=False)
    env.filters.update(md=text_escape.text, code=_code, anchor=text_escape.anchor, controls=text_escape.controls)
    env.globals["nav"] = lambda current: Markup(nav_html(current))  # the HTML pages' first line after <body>
    return env


_ENV = environment()


def render(template_name: str, **context: Any) -> str:
    """The text of ``templates/<template_name>`` rendered with ``context``."""
    return _ENV.get_template(template_name).render(**context)


def macro(template_name: str, name: str) -> Any:
    """The macro ``name`` of ``templates/<template_name>``, callable from Python (it returns
    :class:`Markup`)."""
    return getattr(_ENV.get_template(template_name).module, name)


def nav_html(current: str, present: Iterable[str] | None = None) -> str:
    """The links between the run's pages (``current`` is not a link). ``present``: the pages the
    folder holds (default: NAV but NAV_OPTIONAL); one it lacks is named without a link (a run without an
    architecture case has no ``porting.html``: the link led nowhere)."""
    present = ({page for page, _ in NAV if page not in NAV_OPTIONAL} if present is None else set(present)) | {current}
    return str(render("nav.html.j2", pages=NAV, current=current, present=present))
