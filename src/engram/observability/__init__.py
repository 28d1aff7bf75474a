"""What an operator watches: Prometheus metrics (``metrics``), JSON access logs with request ids (``logs``) and
OpenTelemetry traces when configured (``tracing``)."""
