"""`--web.config.file`: the Prometheus exporter-toolkit web config, read as exporter-toolkit
reads it and re-read while the exporter serves.

    tls_server_config:             # paths are relative to this file
      cert_file: server.crt        # or `cert: <PEM>` inline
      key_file: server.key         # or `key: <PEM>` inline
      client_auth_type: RequireAndVerifyClientCert
      client_ca_file: ca.crt       # or `client_ca: <PEM>` inline
      client_allowed_sans: [prometheus.example]
      min_version: TLS12           # TLS10..TLS13; max_version likewise (default TLS13)
      cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]   # TLS 1.2 and below
      curve_preferences: [CurveP256]
      prefer_server_cipher_suites: true
    http_server_config:
      headers: {Strict-Transport-Security: max-age=31536000}
      http2: true                  # accepted for compatibility: this server speaks HTTP/1.1
    rate_limit: {interval: 1s, burst: 10}
    basic_auth_users:
      prometheus: $2b$12$...       # bcrypt hash, never the password

The reference is prometheus/exporter-toolkit at 19a7c2d (Jul 2026): web/tls_config.go
(getConfig, ConfigToTLSConfig, Serve), web/handler.go (validateHeaderConfig, ServeHTTP) and
web/cache.go. Where this reader is stricter than upstream, the rule says why ("stricter:").

One idea per room: `fields` (the YAML and its scalars), `settings` (one reading of the
file), `tls_context` (the TLS context and the SAN check), `auth` (basic auth), `ratelimit`
(the token bucket) and `webconfig` (the live config: re-read, the gate at each request).
"""
