path "transit/keys/carnet-*" {
  capabilities = ["create", "read", "update", "delete"]
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
path "transit/keys/carnet-*/rotate" {
  capabilities = ["update"]
}
path "transit/keys/carnet-*/config" {
  capabilities = ["update"]
}
path "transit/rewrap/carnet-*" {
  capabilities = ["update"]
}
