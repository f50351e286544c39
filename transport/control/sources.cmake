# The bootstrap control plane: store protocol, TCP store server and client,
# root info, interface selection, whitelist. Paths are relative to transport/.
list(APPEND sources
  control/store_protocol.cc
  control/pending_waits.cc
  control/store_session.cc
  control/tcp_store_server.cc
  control/deadline_socket.cc
  control/tcp_store_client.cc
  control/whitelist.cc
  control/netif.cc
  control/root_info.cc
  control/root_bootstrap.cc)
