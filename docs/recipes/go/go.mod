module licence-server/recipes/verify

go 1.19

require github.com/gowebpki/jcs v1.0.1
