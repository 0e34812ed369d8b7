#!/usr/bin/env python3
"""Tracing on the wire: a real `tessera serve` exports OTLP/HTTP protobuf to a receiver of our own.

    Server/Tests/tracing/otlp_wire.py --tessera PATH

Starts a tiny HTTP server that decodes each `POST /v1/traces` and `POST /v1/metrics` with the
`opentelemetry-proto` package from PyPI (the OpenTelemetry project's own generated protobuf
classes), then `tessera serve` with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at it, and sends an
anonymous start carrying a W3C `traceparent`. Checks: the server span continues the caller's trace
(its trace ID, the caller's span as its parent), is named after the route, with the semantic
conventions' HTTP attributes; database spans are its children; the resource names the service; the
metric `http.server.request.duration` is a histogram with the route; and a request without a
`traceparent` starts a trace of its own. Prints one line per check; exits non-zero when one fails.
"""
import argparse, json, os, sys, tempfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
import tessera_harness as harness  # noqa: E402

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


class Receiver(ThreadingHTTPServer):
    """Keeps every decoded export request; answers 200 with an empty protobuf response."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.content_types: set[str] = set()
        self.errors: list[str] = []

    def spans(self):
        with self.lock:
            return [(resource.resource, span) for request in self.traces for resource in request.resource_spans
                    for scope in resource.scope_spans for span in scope.spans]

    def metric_points(self, name):
        with self.lock:
            return [metric for request in self.metrics for resource in request.resource_metrics
                    for scope in resource.scope_metrics for metric in scope.metrics if metric.name == name]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        server: Receiver = self.server  # type: ignore[assignment]
        with server.lock:
            server.content_types.add(self.headers.get("Content-Type", ""))
        try:
            if self.path == "/v1/traces":
                message = ExportTraceServiceRequest.FromString(body)
                with server.lock:
                    server.traces.append(message)
            elif self.path == "/v1/metrics":
                message = ExportMetricsServiceRequest.FromString(body)
                with server.lock:
                    server.metrics.append(message)
            else:
                raise ValueError(f"unexpected path {self.path}")
        except Exception as error:  # a body that does not decode is what this test is for
            with server.lock:
                server.errors.append(f"{self.path}: {error!r}")
            self.send_response(400)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_):
        pass


def attributes(item) -> dict:
    values = {}
    for attribute in item.attributes:
        value = attribute.value
        values[attribute.key] = getattr(value, value.WhichOneof("value")) if value.WhichOneof("value") else None
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessera", required=True)
    arguments = parser.parse_args()
    check = harness.Checks()

    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    work = tempfile.mkdtemp(prefix="tessera-otlp-")
    database = f"sqlite:{os.path.join(work, 'tessera.sqlite')}"
    environment = harness.clean_environment(
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.server_address[1]}",
        OTEL_BSP_SCHEDULE_DELAY="100", OTEL_METRIC_EXPORT_INTERVAL="200")
    for key in ("OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"):
        environment.pop(key, None)
    project = harness.create_project(arguments.tessera, database, "Tracing", what="otlp")
    port = harness.free_port()
    log = open(os.path.join(work, "serve.log"), "w")
    process = harness.serve(arguments.tessera, database, port, "--log-level", "warning", log=log,
                            environment=environment)
    try:
        harness.wait_ready(port, process)
        body = json.dumps(harness.new_installation()).encode()
        import http.client
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("POST", "/v1/sessions/anonymous", body=body, headers={
            "Authorization": f"Bearer {project.publishable_key}", "Content-Type": "application/json",
            "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01", "tracestate": "tessera=test"})
        response = connection.getresponse()
        response.read()
        check("the traced request is answered", response.status in (200, 201), str(response.status))
        connection.request("GET", "/health/live")
        connection.getresponse().read()

        def server_span():
            return next((span for _, span in receiver.spans()
                         if span.trace_id.hex() == CALLER_TRACE and span.kind == Span.SPAN_KIND_SERVER), None)

        ok, seconds = harness.eventually(lambda: server_span() is not None, seconds=30)
        check("the receiver gets the request's server span", ok, f"spans: {len(receiver.spans())}")
        check("every export decodes as OTLP protobuf", not receiver.errors, "; ".join(receiver.errors))
        check("exports are sent as application/x-protobuf", receiver.content_types <= {"application/x-protobuf"},
              str(receiver.content_types))
        span = server_span()
        if span is not None:
            values = attributes(span)
            check("the server span's parent is the caller's span", span.parent_span_id.hex() == CALLER_SPAN,
                  span.parent_span_id.hex())
            check("it is named after the route", span.name == "POST /v1/sessions/anonymous", span.name)
            check("it has the HTTP semantic conventions' attributes",
                  values.get("http.request.method") == "POST" and values.get("http.route") == "/v1/sessions/anonymous"
                  and values.get("http.response.status_code") in (200, 201), str(values))
            check("the caller's tracestate is kept", span.trace_state == "tessera=test", span.trace_state)
            children = [child for _, child in receiver.spans()
                        if child.trace_id == span.trace_id and child.parent_span_id == span.span_id]
            database = [child for child in children if attributes(child).get("db.system.name") == "sqlite"]
            check("its database work is in child client spans", database and all(
                child.kind == Span.SPAN_KIND_CLIENT for child in database), str([c.name for c in children]))
            resource = next(resource for resource, candidate in receiver.spans() if candidate == span)
            check("the resource names the service", attributes(resource).get("service.name") == "tessera",
                  str(attributes(resource)))

        def untraced():
            return [span for _, span in receiver.spans()
                    if span.name == "GET /health/live" and span.kind == Span.SPAN_KIND_SERVER]

        ok, _ = harness.eventually(lambda: bool(untraced()), seconds=30)
        check("a request without traceparent starts a trace of its own",
              ok and all(span.trace_id.hex() != CALLER_TRACE and not span.parent_span_id for span in untraced()))

        def durations():
            return receiver.metric_points("http.server.request.duration")

        ok, _ = harness.eventually(lambda: any(
            attributes(point).get("http.route") == "/v1/sessions/anonymous"
            for metric in durations() for point in metric.histogram.data_points), seconds=30)
        check("http.server.request.duration is a histogram per route", ok,
              str([metric.WhichOneof("data") for metric in durations()]))
    finally:
        statuses = harness.stop(process)
        receiver.shutdown()
    check("tessera serve stops cleanly with tracing on", statuses == [0], str(statuses))
    if check.failures:
        print(f"serve log: {log.name}")
        sys.exit(1)


if __name__ == "__main__":
    main()
