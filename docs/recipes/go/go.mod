module licence-server/recipes/verify

go 1.19
