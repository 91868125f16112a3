module licence-server.example/client

go 1.19
