# The TCP transport (transport/tcp/) and the transport-generic wait loop and link probe.
list(APPEND sources
  tcp/tcp_options.cc tcp/tcp_frame.cc tcp/socket_util.cc tcp/socket_stream.cc
  tcp/tcp_connection.cc tcp/tcp_connection_retry.cc tcp/tcp_retry.cc tcp/tcp_acceptor.cc tcp/tcp_dialer.cc tcp/tcp_transport.cc
  wait_idle.cc link_probe.cc)
