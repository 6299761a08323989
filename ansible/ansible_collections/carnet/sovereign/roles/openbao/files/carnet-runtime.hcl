path "transit/keys/carnet-*" {
  capabilities = ["read"]
}
path "transit/datakey/plaintext/carnet-*" {
  capabilities = ["update"]
}
path "transit/decrypt/carnet-*" {
  capabilities = ["update"]
}
path "auth/token/lookup-self" {
  capabilities = ["read"]
}
path "secret/data/carnet/data-keys/*" {
  capabilities = ["create", "read", "update"]
}
path "secret/metadata/carnet/data-keys/*" {
  capabilities = ["read", "update", "delete", "list"]
}
