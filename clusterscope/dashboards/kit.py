"""Small helpers over the Grafana Foundation SDK so each dashboard reads as a list of panels.

Every panel gets an explicit datasource (on the panel and on each target) because
provisioned dashboards must not depend on which datasource a Grafana instance marks default.
The datasource is a template variable (`datasource`, `logs_ds`) whose default is the uid
dashboards/provisioning/datasources gives, so a dashboard imported into a Grafana whose
datasources carry other uids still works: the user picks them from the variable.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders import (
    bargauge,
    heatmap,
    logs,
    prometheus,
    stat,
    statetimeline,
    table,
    text,
    timeseries,
)
from grafana_foundation_sdk.builders import dashboard as dash
from grafana_foundation_sdk.builders.common import GraphThresholdsStyleConfig, StackingConfig
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.cog.runtime import UnknownDataquery
from grafana_foundation_sdk.models.common import (
    GraphDrawStyle,
    GraphThresholdsStyleMode,
    StackingMode,
)
from grafana_foundation_sdk.models.dashboard import (
    DashboardLinkType,
    DataSourceRef,
    DataTransformerConfig,
    DynamicConfigValue,
    FieldColorModeId,
    Threshold,
    ThresholdsMode,
    ValueMap,
    ValueMappingResult,
    VariableOption,
    VariableRefresh,
    VariableSort,
)
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from clusterscope.dashboards.uids import TAG
from clusterscope.logs.logsql import CHANGES_ANNOTATION
from clusterscope.logs.logsql import DATASOURCE_TYPE as LOGS_TYPE

# (variable name, datasource type, provisioned uid, provisioned name)
METRICS_DS = ("datasource", "prometheus", "victoriametrics", "VictoriaMetrics")
# the VictoriaLogs datasource plugin (VictoriaMetrics/victorialogs-datasource v0.30.1,
# src/plugin.json "id"), provisioned with uid `victorialogs`
LOGS_DS = ("logs_ds", LOGS_TYPE, "victorialogs", "VictoriaLogs")
VM = DataSourceRef(type_val="prometheus", uid="${datasource}")
LOGS = DataSourceRef(type_val=LOGS_TYPE, uid="${logs_ds}")

# Shown on real deployments too (a text panel cannot depend on a query), so it is worded
# as a test the reader applies, next to the tile that answers it.
SIMULATED_NOTE = (
    "**Real or simulated?** Only series labelled `simulated=\"true\"` (and NDB versions"
    " ending in `-sim`) come from the clusterscope NDB simulator rather than a real NDB"
    " Cluster; the Data source tile says which. Simulated figures check the dashboards and"
    " alerts, they are never measurements.")


def product(uid: str) -> str:
    """clusterscope-ndb-node -> ndb: the cluster names of NDB and Galera differ, so only
    links within one product carry the variables along."""
    return uid.split("-")[1]


def link_to(uid: str, title: str, *, include_vars: bool) -> dash.DashboardLink:
    return (dash.DashboardLink(title).type(DashboardLinkType.LINK).url(f"/d/{uid}")
            .include_vars(include_vars).keep_time(True).icon("dashboard"))


def dashboard(uid: str, title: str, description: str, tags: list[str],
              links: list[tuple[str, str]], *, since: str = "now-1h") -> dash.Dashboard:
    d = (dash.Dashboard(title).uid(uid).description(description).tags([TAG, *tags])
         .time(since, "now").refresh("30s").timezone("browser").editable())
    d.link(dash.DashboardLink("clusterscope").type(DashboardLinkType.DASHBOARDS).tags([TAG])
           .as_dropdown(True).include_vars(False).keep_time(True))
    for link_uid, link_title in links:
        if link_uid != uid:
            d.link(link_to(link_uid, link_title,
                           include_vars=product(link_uid) == product(uid)))
    for name, kind, ds_uid, ds_name in (METRICS_DS, LOGS_DS):
        d.with_variable(dash.DatasourceVariable(name).label(ds_name).type(kind)
                        .current(VariableOption(selected=True, text=ds_name, value=ds_uid)))
    # every dashboard marks the configuration and version changes of its clusters
    d.annotation(logs_annotation(CHANGES_ANNOTATION["name"], CHANGES_ANNOTATION["iconColor"],
                                 CHANGES_ANNOTATION["expr"]))
    return d


# -- variables -------------------------------------------------------------------------

def prom_var(name: str, label: str, query: str, *, multi: bool = False) -> dash.QueryVariable:
    return _var(VM, name, label, query, multi)


def logs_var(name: str, label: str, field: str, query: str = "*", *,
             multi: bool = False) -> dash.QueryVariable:
    """A variable of a field's values: the plugin's VariableQuery (victorialogs-datasource
    v0.30.1 src/types.ts: {type: "fieldValue", field, query}), answered by
    /select/logsql/field_values over the dashboard's time range."""
    return _var(LOGS, name, label, {"type": "fieldValue", "field": field, "query": query,
                                    "refId": "LogsVariableQuery"}, multi)


def _var(ds: DataSourceRef, name: str, label: str, query: str | dict, multi: bool
         ) -> dash.QueryVariable:
    v = (dash.QueryVariable(name).label(label).datasource(ds).query(query)
         .refresh(VariableRefresh.ON_TIME_RANGE_CHANGED).sort(VariableSort.NATURAL_ASC))
    if multi:
        # ".*" rather than the joined values: series without the label still match
        v = (v.multi(True).include_all(True).all_value(".*")
             .current(VariableOption(selected=True, text="All", value="$__all")))
    return v


# -- queries ---------------------------------------------------------------------------

def q(expr: str, legend: str = "", *, instant: bool = False) -> prometheus.Dataquery:
    t = prometheus.Dataquery().expr(expr).datasource(VM).legend_format(legend or "__auto")
    return t.instant() if instant else t.range()


def table_q(expr: str) -> prometheus.Dataquery:
    """An instant query whose labels become table columns."""
    return (prometheus.Dataquery().expr(expr).datasource(VM).instant()
            .format(PromQueryFormat.TABLE))


class LogsQuery(cogbuilder.Builder[cogvariants.Dataquery]):
    """A query of the VictoriaLogs plugin (victorialogs-datasource v0.30.1 src/types.ts
    `Query`; pkg/plugin/query.go): `queryType` "instant" runs /select/logsql/query (log
    lines), "statsRange" /select/logsql/stats_query_range with Grafana's step;
    `legendFormat` takes {{field}} (query.go parseLegend). The SDK has no builder for the
    plugin: the query is kept as its JSON (the SDK decodes it as an UnknownDataquery)."""

    def __init__(self, expr: str, query_type: str, legend: str = "") -> None:
        self.data: dict = {"datasource": {"type": LOGS_TYPE, "uid": "${logs_ds}"},
                           "editorMode": "code", "expr": expr, "queryType": query_type}
        if legend:
            self.data["legendFormat"] = legend

    def ref_id(self, ref: str) -> LogsQuery:
        self.data["refId"] = ref
        return self

    def build(self) -> UnknownDataquery:
        return UnknownDataquery(dict(self.data))


def lq(expr: str) -> LogsQuery:
    """A log query (the lines themselves)."""
    return LogsQuery(expr, "instant")


def lq_stats(expr: str, legend: str = "") -> LogsQuery:
    """A `| stats` query, one point per step of the panel's range."""
    return LogsQuery(expr, "statsRange", legend)


class _RawTarget(cogbuilder.Builder):
    """An annotation's `target` as the plugin's query: the SDK models annotation targets as
    the built-in Grafana datasource's (limit, matchAny, tags, type; its own TODO says it
    should be a DataQuery), so the JSON is written as it is."""

    def __init__(self, data: dict) -> None:
        self.data = data

    def build(self) -> UnknownDataquery:
        return UnknownDataquery(dict(self.data))


def logs_annotation(name: str, icon_color: str, expr: str) -> dash.AnnotationQuery:
    """Grafana runs an annotation's `target` through the datasource with refId "Anno",
    which the plugin turns into annotations (victorialogs-datasource v0.30.1
    src/transformers/types.ts ANNOTATIONS_REF_ID)."""
    return (dash.AnnotationQuery().name(name).datasource(LOGS).enable(True)
            .icon_color(icon_color)
            .target(_RawTarget({"expr": expr, "queryType": "instant", "refId": "Anno"})))


def _targets(panel, targets) -> None:
    for ref, t in zip("ABCDEFGHIJ", targets, strict=False):
        panel.with_target(t.ref_id(ref))


# -- panels ----------------------------------------------------------------------------

def ts(title: str, desc: str, unit: str, *targets, w: int = 12, h: int = 8,
       stack: bool = False, bars: bool = False, fill: int = 10, minimum: float | None = None
       ) -> timeseries.Panel:
    p = (timeseries.Panel().title(title).description(desc).datasource(VM).unit(unit)
         .span(w).height(h).fill_opacity(fill).line_width(1))
    if stack:
        p = p.stacking(StackingConfig().mode(StackingMode.NORMAL))
    if bars:
        p = p.draw_style(GraphDrawStyle.BARS)
    if minimum is not None:
        p = p.min(minimum)
    _targets(p, targets)
    return p


def share(title: str, desc: str, *targets, threshold: float, w: int = 8, h: int = 8
          ) -> timeseries.Panel:
    """A used/total ratio on a 0..1 axis with its alert's threshold drawn."""
    return alert_threshold(ts(title, desc, "percentunit", *targets, w=w, h=h, minimum=0)
                           .max(1), threshold)


def stat_panel(title: str, desc: str, unit: str, *targets, w: int = 4, h: int = 4,
               mappings: dict[str, tuple[str, str]] | None = None,
               no_value: str | None = None, neutral: bool | None = None) -> stat.Panel:
    p = stat.Panel().title(title).description(desc).datasource(VM).unit(unit).span(w).height(h)
    if mappings:
        p = p.mappings([value_map(mappings)])
    if no_value is not None:
        p = p.no_value(no_value)
    if neutral or (neutral is None and not mappings):
        p = neutral_colour(p)
    _targets(p, targets)
    return p


# -- thresholds ------------------------------------------------------------------------
# Without explicit thresholds Grafana colours every value above 80 red (its default
# base green / 80 red): an uptime of 81 s or a restart of 81 s would look like a fault.

FIXED_BLUE = dash.FieldColor().mode(FieldColorModeId.FIXED).fixed_color("blue")
NO_THRESHOLDS = (dash.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE)
                 .steps([Threshold(value=None, color="blue")]))


def neutral_colour(p):
    """One fixed colour: a count or a duration that is neither good nor bad."""
    return p.color_scheme(FIXED_BLUE).thresholds(NO_THRESHOLDS)


def alert_threshold(p, value: float):
    """Draw an alert's threshold (from rules/config.yaml): a line and area on a graph, the
    colour of a stat."""
    p = p.thresholds(dash.ThresholdsConfig().mode(ThresholdsMode.ABSOLUTE).steps([
        Threshold(value=None, color="green"), Threshold(value=value, color="red")]))
    if hasattr(p, "thresholds_style"):
        p = (p.thresholds_style(GraphThresholdsStyleConfig().mode(
                GraphThresholdsStyleMode.LINE_AND_AREA))
             .color_scheme(dash.FieldColor().mode(FieldColorModeId.PALETTE_CLASSIC)))
    else:
        p = p.color_scheme(dash.FieldColor().mode(FieldColorModeId.THRESHOLDS))
    return p


def state_panel(title: str, desc: str, *targets, mappings: dict[str, tuple[str, str]],
                w: int = 12, h: int = 8) -> statetimeline.Panel:
    p = (statetimeline.Panel().title(title).description(desc).datasource(VM).unit("none")
         .span(w).height(h).mappings([value_map(mappings)]))
    _targets(p, targets)
    return p


def table_panel(title: str, desc: str, unit: str, *targets, w: int = 12, h: int = 8,
                transformations: list[DataTransformerConfig] | None = None) -> table.Panel:
    p = table.Panel().title(title).description(desc).datasource(VM).unit(unit).span(w).height(h)
    for tr in transformations or []:
        p = p.with_transformation(tr)
    _targets(p, targets)
    return p


def bars_panel(title: str, desc: str, unit: str, *targets, w: int = 12, h: int = 8
               ) -> bargauge.Panel:
    p = (bargauge.Panel().title(title).description(desc).datasource(VM).unit(unit)
         .span(w).height(h))
    _targets(p, targets)
    return p


def heatmap_panel(title: str, desc: str, unit: str, *targets, w: int = 12, h: int = 8
                  ) -> heatmap.Panel:
    # Each series is one row (an LDM thread), so Grafana must not bucket the values itself.
    p = (heatmap.Panel().title(title).description(desc).datasource(VM).unit(unit)
         .span(w).height(h).calculate(False))
    _targets(p, targets)
    return p


def logs_panel(title: str, desc: str, *targets, w: int = 24, h: int = 12) -> logs.Panel:
    p = (logs.Panel().title(title).description(desc).datasource(LOGS).span(w).height(h)
         .show_time(True).wrap_log_message(True).enable_log_details(True))
    _targets(p, targets)
    return p


def logs_ts(title: str, desc: str, unit: str, *targets, w: int = 12, h: int = 8
            ) -> timeseries.Panel:
    p = (timeseries.Panel().title(title).description(desc).datasource(LOGS).unit(unit)
         .span(w).height(h).draw_style(GraphDrawStyle.BARS).fill_opacity(60))
    _targets(p, targets)
    return p


def note(title: str, content: str, *, w: int = 24, h: int = 3) -> text.Panel:
    return text.Panel().title(title).content(content).span(w).height(h)


def value_map(mappings: dict[str, tuple[str, str]]) -> ValueMap:
    return ValueMap(options={k: ValueMappingResult(text=t, color=c, index=i)
                             for i, (k, (t, c)) in enumerate(mappings.items())})


def matrix(row: str, column: str) -> DataTransformerConfig:
    """Turn instant series into a row x column table (e.g. phase x node)."""
    return DataTransformerConfig(id_val="groupingToMatrix",
                                 options={"rowField": row, "columnField": column,
                                          "valueField": "Value"})


def hide_columns(*extra: str) -> DataTransformerConfig:
    """Drop the columns a table query adds that say nothing to a reader."""
    hidden = {name: True for name in ("Time", "__name__", "instance", "job", *extra)}
    return DataTransformerConfig(id_val="organize", options={"excludeByName": hidden})


def merge() -> DataTransformerConfig:
    """Join instant table queries on their labels: one row per label set."""
    return DataTransformerConfig(id_val="merge", options={})


def rename(names: dict[str, str]) -> DataTransformerConfig:
    return DataTransformerConfig(id_val="organize", options={"renameByName": names})


def highlight(color: str) -> list[DynamicConfigValue]:
    return [DynamicConfigValue(id_val="color", value={"mode": "fixed", "fixedColor": color}),
            DynamicConfigValue(id_val="custom.lineWidth", value=3)]


def data_link(title: str, uid: str, params: str) -> dash.DashboardLink:
    return (dash.DashboardLink(title).url(f"/d/{uid}?{params}&${{__url_time_range}}"))
