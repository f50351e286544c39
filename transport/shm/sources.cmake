list(APPEND sources shm/shm_transport.cc shm/shm_connection.cc)
