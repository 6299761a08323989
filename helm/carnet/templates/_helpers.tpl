{{/* Names and labels. */}}
{{- define "carnet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "carnet.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* dict "ctx" $ "component" "api" */}}
{{- define "carnet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "carnet.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "carnet.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "carnet.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: carnet
{{- end -}}

{{/* Components the NetworkPolicy applies to: every pod that runs Carnet's code. */}}
{{- define "carnet.policyComponents" -}}
{{- list "api" "worker" "maintenance" "backup" "migrate" | toJson -}}
{{- end -}}

{{/* repository:tag[@digest]; dict "image" <values> "default" <tag> */}}
{{- define "carnet.imageRef" -}}
{{- $tag := default .default .image.tag -}}
{{- if .image.digest -}}
{{- printf "%s:%s@%s" .image.repository $tag .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "carnet.image" -}}
{{- include "carnet.imageRef" (dict "image" .Values.image "default" .Chart.AppVersion) -}}
{{- end -}}

{{- define "carnet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "carnet.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* "true" when the embedded vector engine (qdrant-edge, one owner process) is used, else "". */}}
{{- define "carnet.embedded" -}}
{{- if eq .Values.carnet.vectorBackend "edge" -}}true{{- end -}}
{{- end -}}

{{/* Which links Carnet uses: a dict link name -> true. */}}
{{- define "carnet.links" -}}
{{- $links := dict -}}
{{- if eq .Values.carnet.vectorBackend "server" -}}{{- $_ := set $links "qdrant" true -}}{{- end -}}
{{- if or (eq .Values.carnet.kmsBackend "vault") (eq .Values.carnet.keyStore "vault") -}}{{- $_ := set $links "vault" true -}}{{- end -}}
{{- if eq .Values.carnet.catalog "postgres" -}}{{- $_ := set $links "postgres" true -}}{{- end -}}
{{- if eq .Values.carnet.extractor "mistral" -}}{{- $_ := set $links "llm" true -}}{{- end -}}
{{- if eq .Values.carnet.embedder "remote" -}}{{- $_ := set $links "embedServer" true -}}{{- end -}}
{{- toJson $links -}}
{{- end -}}

{{- define "carnet.serves.tls" -}}
{{- if .Values.tls.server.existingSecret -}}true{{- end -}}
{{- end -}}

{{- define "carnet.port" -}}
{{- if include "carnet.serves.tls" . -}}8443{{- else -}}8080{{- end -}}
{{- end -}}

{{- define "carnet.scheme" -}}
{{- if include "carnet.serves.tls" . -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{- define "carnet.llmBaseUrl" -}}
{{- if and .Values.vllm.enabled (not .Values.llm.baseUrl) -}}
{{- printf "https://%s-vllm.%s.svc:%d" (include "carnet.fullname" .) .Release.Namespace 8443 -}}
{{- else -}}
{{- .Values.llm.baseUrl -}}
{{- end -}}
{{- end -}}

{{- define "carnet.embedBaseUrl" -}}
{{- if and .Values.vllmEmbed.enabled (not .Values.embedServer.baseUrl) -}}
{{- printf "https://%s-vllm-embed.%s.svc:%d" (include "carnet.fullname" .) .Release.Namespace 8443 -}}
{{- else -}}
{{- .Values.embedServer.baseUrl -}}
{{- end -}}
{{- end -}}

{{/* The directory secret files are found in, for the file-based providers. */}}
{{- define "carnet.secretsDir" -}}
{{- if eq .Values.secrets.provider "vaultAgent" -}}/vault/secrets{{- else if eq .Values.secrets.provider "csi" -}}/run/secrets/carnet{{- end -}}
{{- end -}}

{{/* The container command: carnet, or carnet behind carnet-env-from-files when secrets are files. */}}
{{- define "carnet.command" -}}
{{- if include "carnet.secretsDir" . -}}
{{- list "carnet-env-from-files" (include "carnet.secretsDir" .) "carnet" | toJson -}}
{{- else -}}
{{- list "carnet" | toJson -}}
{{- end -}}
{{- end -}}

{{/* Refuse what cannot work, at render time, with a readable message. */}}
{{- define "carnet.validateValues" -}}
{{- $v := .Values -}}
{{- if include "carnet.embedded" . -}}
{{- if gt (int $v.api.replicaCount) 1 -}}
{{- fail (printf "the embedded vector engine (carnet.vectorBackend=edge) is one on-disk shard owned by one process: api.replicaCount must be 1, not %d (use carnet.vectorBackend=server with a Qdrant server to scale out)" (int $v.api.replicaCount)) -}}
{{- end -}}
{{- if and $v.autoscaling.enabled (gt (int $v.autoscaling.maxReplicas) 1) -}}
{{- fail "the embedded vector engine (carnet.vectorBackend=edge) is one on-disk shard owned by one process: it cannot be autoscaled (autoscaling.enabled with maxReplicas > 1)" -}}
{{- end -}}
{{- else if eq $v.carnet.catalog "sqlite" -}}
{{- fail "carnet.catalog=sqlite keeps the catalog in one pod's files: with carnet.vectorBackend=server use carnet.catalog=postgres" -}}
{{- end -}}
{{- if not (or (include "carnet.serves.tls" .) $v.tls.terminatedUpstream) -}}
{{- fail "Carnet never listens in clear: set tls.server.existingSecret (a kubernetes.io/tls Secret), or tls.terminatedUpstream=true with ingress.enabled and networkPolicy.enabled" -}}
{{- end -}}
{{- if and $v.tls.terminatedUpstream (not (and $v.ingress.enabled $v.networkPolicy.enabled)) -}}
{{- fail "tls.terminatedUpstream=true needs ingress.enabled (TLS ends there) and networkPolicy.enabled (nothing else reaches the pod's clear port)" -}}
{{- end -}}
{{- if and $v.tls.server.requireClientCert (not $v.tls.server.clientCa.configMap) -}}
{{- fail "tls.server.requireClientCert needs tls.server.clientCa.configMap" -}}
{{- end -}}
{{- if and $v.tls.server.clientCa.configMap (not (include "carnet.serves.tls" .)) -}}
{{- fail "tls.server.clientCa.configMap needs tls.server.existingSecret (client certificates need TLS)" -}}
{{- end -}}
{{- if and $v.ingress.enabled (not (and $v.ingress.host $v.ingress.tlsSecret)) -}}
{{- fail "ingress.enabled needs ingress.host and ingress.tlsSecret: the Ingress always serves TLS" -}}
{{- end -}}
{{- if gt (int $v.qdrant.writeConsistencyFactor) (max 1 (int $v.qdrant.replicationFactor) | int) -}}
{{- fail (printf "qdrant.writeConsistencyFactor (%d) cannot exceed qdrant.replicationFactor (%d; 0 is Qdrant's default, 1): a write would need more replicas than a shard has" (int $v.qdrant.writeConsistencyFactor) (int $v.qdrant.replicationFactor)) -}}
{{- end -}}
{{- if and (eq $v.qdrant.sharding "tiered") (gt (int $v.qdrant.shardNumber) 0) -}}
{{- fail "qdrant.sharding=tiered keeps small tenants in one fallback shard and gives a promoted tenant the shards its promotion creates: leave qdrant.shardNumber at 0" -}}
{{- end -}}
{{- if not $v.secrets.apiKeyPepper.existingSecret -}}
{{- fail "secrets.apiKeyPepper.existingSecret is required (CARNET_API_KEY_PEPPER comes from an existing Secret)" -}}
{{- end -}}
{{- if and (eq $v.vault.auth "approle") (eq $v.secrets.provider "kubernetes") (not $v.secrets.vaultAppRole.existingSecret) -}}
{{- fail "vault.auth=approle needs secrets.vaultAppRole.existingSecret (or vault.auth=kubernetes: no credential at all)" -}}
{{- end -}}
{{- $links := include "carnet.links" . | fromJson -}}
{{- if $v.networkPolicy.enabled -}}
{{- range $link := list "qdrant" "vault" "postgres" "llm" "embedServer" -}}
{{- if and (hasKey $links $link) (not (and (eq $link "llm") $v.vllm.enabled)) (not (and (eq $link "embedServer") $v.vllmEmbed.enabled)) -}}
{{- $egress := index $v $link "egress" -}}
{{- if not (and $egress.to $egress.ports) -}}
{{- fail (printf "%s.egress.to and %s.egress.ports must name the peers and ports of %s: an empty list would open egress to everything" $link $link $link) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $v.backup.enabled (not (include "carnet.embedded" .)) (not $v.backup.image.repository) -}}
{{- fail "backup.enabled with the Qdrant server needs backup.image.repository: an image with sh, curl, pg_dump and sha256sum (Carnet's image has neither curl nor pg_dump)" -}}
{{- end -}}
{{- if $v.vllm.enabled -}}
{{- if not $v.vllm.model.existingClaim -}}
{{- fail "vllm.enabled needs vllm.model.existingClaim: a claim holding the model's weights (nothing is downloaded)" -}}
{{- end -}}
{{- if not $v.vllm.tlsSecret -}}
{{- fail "vllm.enabled needs vllm.tlsSecret: vLLM serves HTTPS only" -}}
{{- end -}}
{{- if not $v.vllm.apiKey.existingSecret -}}
{{- fail "vllm.enabled needs vllm.apiKey.existingSecret" -}}
{{- end -}}
{{- end -}}
{{- if $v.vllmEmbed.enabled -}}
{{- if ne $v.carnet.embedder "remote" -}}
{{- fail "vllmEmbed.enabled serves the embedding model to Carnet: set carnet.embedder=remote" -}}
{{- end -}}
{{- if not $v.vllmEmbed.model.existingClaim -}}
{{- fail "vllmEmbed.enabled needs vllmEmbed.model.existingClaim: a claim holding the model's weights (nothing is downloaded)" -}}
{{- end -}}
{{- if not $v.vllmEmbed.tlsSecret -}}
{{- fail "vllmEmbed.enabled needs vllmEmbed.tlsSecret: vLLM serves HTTPS only" -}}
{{- end -}}
{{- if not $v.vllmEmbed.apiKey.existingSecret -}}
{{- fail "vllmEmbed.enabled needs vllmEmbed.apiKey.existingSecret" -}}
{{- end -}}
{{- if ne (toString $v.vllmEmbed.apiKey.existingSecret) (toString $v.embedServer.apiKey.existingSecret) -}}
{{- fail "vllmEmbed.apiKey.existingSecret and embedServer.apiKey.existingSecret must name the same Secret (the key vLLM checks is the one Carnet sends)" -}}
{{- end -}}
{{- end -}}
{{- if and (eq $v.carnet.embedder "remote") (not (include "carnet.embedBaseUrl" .)) -}}
{{- fail "carnet.embedder=remote needs embedServer.baseUrl, or vllmEmbed.enabled" -}}
{{- end -}}
{{- $files := dict "vaultAgent" $v.secrets.vaultAgent.secrets "csi" $v.secrets.csi.objects -}}
{{- if hasKey $files $v.secrets.provider -}}
{{- $configured := index $files $v.secrets.provider -}}
{{- range $name := include "carnet.usedSecretNames" . | fromJsonArray -}}
{{- if not (hasKey $configured $name) -}}
{{- fail (printf "secrets.provider=%s: %s is needed and secrets.%s has no entry for it" $v.secrets.provider $name (ternary "vaultAgent.secrets" "csi.objects" (eq $v.secrets.provider "vaultAgent"))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $managed := include "carnet.chartSettings" . | fromYaml -}}
{{- range $name, $value := $v.carnet.settings -}}
{{- if regexMatch "(API_KEY|PASSWORD|TOKEN|SECRET_ID|ROLE_ID|PEPPER|USER_PIN|DSN)$" $name -}}
{{- fail (printf "carnet.settings.%s is a secret: it comes from an existing Secret (secrets.*), never from values" $name) -}}
{{- end -}}
{{- if or (hasKey $managed $name) (hasPrefix "CARNET_TLS__" $name) -}}
{{- fail (printf "carnet.settings.%s is set by this chart from its own values: set those instead" $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Files under /etc/carnet/tls (one projected volume): a dict file name -> {kind, name, key}. */}}
{{- define "carnet.tlsFiles" -}}
{{- $v := .Values -}}
{{- $files := dict "ca.pem" (dict "kind" "configMap" "name" $v.tls.ca.configMap "key" $v.tls.ca.key) -}}
{{- if include "carnet.serves.tls" . -}}
{{- $_ := set $files "server.crt" (dict "kind" "secret" "name" $v.tls.server.existingSecret "key" "tls.crt") -}}
{{- $_ := set $files "server.key" (dict "kind" "secret" "name" $v.tls.server.existingSecret "key" "tls.key") -}}
{{- if $v.tls.server.clientCa.configMap -}}
{{- $_ := set $files "client-ca.pem" (dict "kind" "configMap" "name" $v.tls.server.clientCa.configMap "key" $v.tls.server.clientCa.key) -}}
{{- end -}}
{{- end -}}
{{- $links := include "carnet.links" . | fromJson -}}
{{- range $link := list "qdrant" "vault" "postgres" "llm" "embedServer" -}}
{{- if hasKey $links $link -}}
{{- $tls := index $v $link "tls" -}}
{{- if $tls.ca.configMap -}}
{{- $_ := set $files (printf "%s-ca.pem" $link) (dict "kind" "configMap" "name" $tls.ca.configMap "key" $tls.ca.key) -}}
{{- end -}}
{{- if $tls.clientCertSecret -}}
{{- $_ := set $files (printf "%s-client.crt" $link) (dict "kind" "secret" "name" $tls.clientCertSecret "key" "tls.crt") -}}
{{- $_ := set $files (printf "%s-client.key" $link) (dict "kind" "secret" "name" $tls.clientCertSecret "key" "tls.key") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $links "embedServer") $v.embedServer.apiKey.existingSecret -}}
{{- $_ := set $files "embed-api-key" (dict "kind" "secret" "name" $v.embedServer.apiKey.existingSecret "key" $v.embedServer.apiKey.key) -}}
{{- end -}}
{{- toJson $files -}}
{{- end -}}

{{/* CARNET_<LINK>__CA_CERT and client certificate settings of one link; dict "ctx" $ "link" "qdrant" "prefix" "CARNET_QDRANT__" */}}
{{- define "carnet.linkTls" -}}
{{- $files := include "carnet.tlsFiles" .ctx | fromJson -}}
{{- $ca := printf "%s-ca.pem" .link -}}
{{ .prefix }}CA_CERT: {{ printf "/etc/carnet/tls/%s" (ternary $ca "ca.pem" (hasKey $files $ca)) | quote }}
{{- if hasKey $files (printf "%s-client.crt" .link) }}
{{ .prefix }}CLIENT_CERT: {{ printf "/etc/carnet/tls/%s-client.crt" .link | quote }}
{{ .prefix }}CLIENT_KEY: {{ printf "/etc/carnet/tls/%s-client.key" .link | quote }}
{{- end }}
{{- end -}}

{{/* Every non-secret setting the chart derives from its values (a YAML map of strings). */}}
{{- define "carnet.chartSettings" -}}
{{- $v := .Values -}}
{{- $embedded := include "carnet.embedded" . -}}
{{- $links := include "carnet.links" . | fromJson -}}
CARNET_ENVIRONMENT: {{ $v.carnet.environment | quote }}
CARNET_LOG_LEVEL: {{ $v.carnet.logLevel | quote }}
CARNET_HOST: "0.0.0.0"
CARNET_PORT: {{ include "carnet.port" . | quote }}
CARNET_DATA_DIR: "/var/lib/carnet/data"
CARNET_KEY_DIR: "/var/lib/carnet/keys"
CARNET_BACKUP_DIR: "/var/lib/carnet/backups"
{{- if include "carnet.serves.tls" . }}
CARNET_TLS__CERT_FILE: "/etc/carnet/tls/server.crt"
CARNET_TLS__KEY_FILE: "/etc/carnet/tls/server.key"
CARNET_TLS__MIN_VERSION: {{ $v.tls.server.minVersion | quote }}
{{- if $v.tls.server.clientCa.configMap }}
CARNET_TLS__CLIENT_CA_FILE: "/etc/carnet/tls/client-ca.pem"
CARNET_TLS__REQUIRE_CLIENT_CERT: {{ $v.tls.server.requireClientCert | toString | quote }}
{{- end }}
{{- end }}
{{- if $v.tls.terminatedUpstream }}
CARNET_TLS__TERMINATED_UPSTREAM: "true"
{{- end }}
{{- if $v.ingress.trustedProxies }}
CARNET_API__TRUSTED_PROXIES: {{ $v.ingress.trustedProxies | toJson | quote }}
{{- end }}
CARNET_VECTOR_BACKEND: {{ $v.carnet.vectorBackend | quote }}
{{- if hasKey $links "qdrant" }}
CARNET_QDRANT__URL: {{ $v.qdrant.url | quote }}
CARNET_QDRANT__COLLECTION: {{ $v.qdrant.collection | quote }}
CARNET_QDRANT__PREFER_GRPC: {{ $v.qdrant.preferGrpc | toString | quote }}
{{- if gt (int $v.qdrant.shardNumber) 0 }}
CARNET_QDRANT__SHARD_NUMBER: {{ $v.qdrant.shardNumber | int | toString | quote }}
{{- end }}
{{- if gt (int $v.qdrant.replicationFactor) 0 }}
CARNET_QDRANT__REPLICATION_FACTOR: {{ $v.qdrant.replicationFactor | int | toString | quote }}
{{- end }}
{{- if gt (int $v.qdrant.writeConsistencyFactor) 0 }}
CARNET_QDRANT__WRITE_CONSISTENCY_FACTOR: {{ $v.qdrant.writeConsistencyFactor | int | toString | quote }}
{{- end }}
CARNET_QDRANT__WRITE_ORDERING: {{ $v.qdrant.writeOrdering | quote }}
CARNET_QDRANT__READ_CONSISTENCY: {{ $v.qdrant.readConsistency | toString | quote }}
CARNET_QDRANT__SHARDING: {{ $v.qdrant.sharding | quote }}
{{- if eq $v.qdrant.sharding "tiered" }}
CARNET_QDRANT__FALLBACK_SHARD_KEY: {{ $v.qdrant.fallbackShardKey | quote }}
{{- end }}
{{ include "carnet.linkTls" (dict "ctx" . "link" "qdrant" "prefix" "CARNET_QDRANT__") }}
{{- end }}
CARNET_CATALOG: {{ $v.carnet.catalog | quote }}
{{- if hasKey $links "postgres" }}
CARNET_POSTGRES__HOST: {{ $v.postgres.host | quote }}
CARNET_POSTGRES__PORT: {{ $v.postgres.port | toString | quote }}
CARNET_POSTGRES__DBNAME: {{ $v.postgres.dbname | quote }}
CARNET_POSTGRES__USER: {{ $v.postgres.user | quote }}
CARNET_POSTGRES__SSLMODE: {{ $v.postgres.sslmode | quote }}
CARNET_POSTGRES__POOL_SIZE: {{ $v.postgres.poolSize | toString | quote }}
CARNET_POSTGRES__CONNECT_TIMEOUT: {{ $v.postgres.connectTimeout | toString | quote }}
CARNET_POSTGRES__AUTO_MIGRATE: {{ not $v.postgres.migrations.enabled | toString | quote }}
{{ include "carnet.linkTls" (dict "ctx" . "link" "postgres" "prefix" "CARNET_POSTGRES__") }}
{{- end }}
CARNET_KMS_BACKEND: {{ $v.carnet.kmsBackend | quote }}
CARNET_KEY_STORE: {{ $v.carnet.keyStore | quote }}
{{- if hasKey $links "vault" }}
CARNET_VAULT__URL: {{ $v.vault.url | quote }}
CARNET_VAULT__AUTH: {{ $v.vault.auth | quote }}
{{- if eq $v.vault.auth "kubernetes" }}
CARNET_VAULT__KUBERNETES_ROLE: {{ $v.vault.kubernetesRole | quote }}
{{- end }}
CARNET_VAULT__MOUNT: {{ $v.vault.mount | quote }}
CARNET_VAULT__KEY_TEMPLATE: {{ $v.vault.keyTemplate | quote }}
CARNET_VAULT__TIMEOUT: {{ $v.vault.timeout | toString | quote }}
{{- if $v.vault.namespace }}
CARNET_VAULT__NAMESPACE: {{ $v.vault.namespace | quote }}
{{- end }}
{{ include "carnet.linkTls" (dict "ctx" . "link" "vault" "prefix" "CARNET_VAULT__") }}
{{- if eq $v.carnet.keyStore "vault" }}
CARNET_KEY_STORE_VAULT__MOUNT: {{ $v.vault.keyStore.mount | quote }}
CARNET_KEY_STORE_VAULT__PREFIX: {{ $v.vault.keyStore.prefix | quote }}
{{- end }}
{{- end }}
CARNET_EXTRACTOR: {{ $v.carnet.extractor | quote }}
{{- if hasKey $links "llm" }}
CARNET_LLM__BASE_URL: {{ include "carnet.llmBaseUrl" . | quote }}
CARNET_LLM__MODEL: {{ $v.llm.model | quote }}
CARNET_LLM__TIMEOUT: {{ $v.llm.timeout | toString | quote }}
{{ include "carnet.linkTls" (dict "ctx" . "link" "llm" "prefix" "CARNET_LLM__") }}
{{- end }}
CARNET_EMBEDDER: {{ $v.carnet.embedder | quote }}
{{- if hasKey $links "embedServer" }}
{{- $e := $v.embedServer }}
CARNET_EMBED_SERVER__BASE_URL: {{ include "carnet.embedBaseUrl" . | quote }}
CARNET_EMBED_SERVER__MODEL: {{ $e.model | quote }}
{{- if $e.modelId }}
CARNET_EMBED_SERVER__MODEL_ID: {{ $e.modelId | quote }}
{{- end }}
CARNET_EMBED_SERVER__DIM: {{ $e.dim | int | toString | quote }}
CARNET_EMBED_SERVER__PREFIXES: {{ $e.prefixes | quote }}
{{- if gt (int $e.truncateTokens) 0 }}
CARNET_EMBED_SERVER__TRUNCATE_TOKENS: {{ $e.truncateTokens | int | toString | quote }}
{{- end }}
CARNET_EMBED_SERVER__TIMEOUT: {{ $e.timeout | toString | quote }}
{{- if $e.apiKey.existingSecret }}
CARNET_EMBED_SERVER__API_KEY_FILE: "/etc/carnet/tls/embed-api-key"
{{- end }}
{{ include "carnet.linkTls" (dict "ctx" . "link" "embedServer" "prefix" "CARNET_EMBED_SERVER__") }}
{{- end }}
CARNET_WORKERS__IN_PROCESS: {{ ternary "true" "false" (not (empty $embedded)) | quote }}
CARNET_WORKERS__THREADS: {{ $v.worker.threads | toString | quote }}
{{- if and $embedded $v.maintenance.enabled }}
CARNET_MAINTENANCE__SCHEDULER: "true"
CARNET_MAINTENANCE__INTERVAL_HOURS: {{ $v.maintenance.intervalHours | toString | quote }}
{{- if $v.backup.enabled }}
CARNET_MAINTENANCE__BACKUP_INTERVAL_HOURS: {{ $v.backup.intervalHours | toString | quote }}
CARNET_MAINTENANCE__BACKUP_KEEP: {{ $v.backup.keep | toString | quote }}
{{- else }}
CARNET_MAINTENANCE__BACKUP_INTERVAL_HOURS: "0"
{{- end }}
{{- else }}
CARNET_MAINTENANCE__SCHEDULER: "false"
{{- end }}
{{- end -}}

{{/* The chart's settings plus carnet.settings. */}}
{{- define "carnet.settings" -}}
{{- $all := merge (dict) (include "carnet.chartSettings" . | fromYaml) -}}
{{- range $name, $value := .Values.carnet.settings -}}
{{- $_ := set $all $name (toString $value) -}}
{{- end -}}
{{- toYaml $all -}}
{{- end -}}

{{/* Secret environment variables: a dict setting name -> {existingSecret, key}, for the settings in use. */}}
{{- define "carnet.secretRefs" -}}
{{- $v := .Values -}}
{{- $links := include "carnet.links" . | fromJson -}}
{{- $refs := dict "CARNET_API_KEY_PEPPER" $v.secrets.apiKeyPepper -}}
{{- if and (hasKey $links "qdrant") $v.secrets.qdrantApiKey.existingSecret -}}
{{- $_ := set $refs "CARNET_QDRANT__API_KEY" $v.secrets.qdrantApiKey -}}
{{- end -}}
{{- if and (hasKey $links "postgres") $v.secrets.postgresPassword.existingSecret -}}
{{- $_ := set $refs "CARNET_POSTGRES__PASSWORD" $v.secrets.postgresPassword -}}
{{- end -}}
{{- if and (hasKey $links "llm") $v.secrets.llmApiKey.existingSecret -}}
{{- $_ := set $refs "CARNET_LLM__API_KEY" $v.secrets.llmApiKey -}}
{{- end -}}
{{- if and (hasKey $links "vault") (eq $v.vault.auth "approle") -}}
{{- $role := $v.secrets.vaultAppRole -}}
{{- $_ := set $refs "CARNET_VAULT__ROLE_ID" (dict "existingSecret" $role.existingSecret "key" $role.roleIdKey) -}}
{{- $_ := set $refs "CARNET_VAULT__SECRET_ID" (dict "existingSecret" $role.existingSecret "key" $role.secretIdKey) -}}
{{- end -}}
{{- toJson $refs -}}
{{- end -}}

{{/* The secret settings the pods need, whatever brings them: a JSON list of names. */}}
{{- define "carnet.usedSecretNames" -}}
{{- $links := include "carnet.links" . | fromJson -}}
{{- $names := list "CARNET_API_KEY_PEPPER" -}}
{{- if hasKey $links "qdrant" -}}{{- $names = append $names "CARNET_QDRANT__API_KEY" -}}{{- end -}}
{{- if hasKey $links "postgres" -}}{{- $names = append $names "CARNET_POSTGRES__PASSWORD" -}}{{- end -}}
{{- if hasKey $links "llm" -}}{{- $names = append $names "CARNET_LLM__API_KEY" -}}{{- end -}}
{{- if and (hasKey $links "vault") (eq .Values.vault.auth "approle") -}}
{{- $names = concat $names (list "CARNET_VAULT__ROLE_ID" "CARNET_VAULT__SECRET_ID") -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* The env list of a Carnet container: secrets by secretKeyRef (provider kubernetes only). */}}
{{- define "carnet.secretEnv" -}}
{{- if eq .Values.secrets.provider "kubernetes" -}}
{{- range $name, $ref := include "carnet.secretRefs" . | fromJson }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.existingSecret }}
      key: {{ $ref.key }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* Pod annotations of the secret providers. */}}
{{- define "carnet.secretAnnotations" -}}
{{- $v := .Values -}}
{{- if eq $v.secrets.provider "vaultAgent" -}}
vault.hashicorp.com/agent-inject: "true"
vault.hashicorp.com/agent-pre-populate-only: "true"
vault.hashicorp.com/role: {{ $v.secrets.vaultAgent.role | quote }}
vault.hashicorp.com/service: {{ $v.vault.url | quote }}
vault.hashicorp.com/tls-secret: {{ $v.secrets.vaultAgent.tlsSecret | quote }}
vault.hashicorp.com/ca-cert: {{ $v.secrets.vaultAgent.caCert | quote }}
vault.hashicorp.com/agent-run-as-user: "10001"
vault.hashicorp.com/agent-run-as-group: "10001"
{{- if $v.vault.namespace }}
vault.hashicorp.com/namespace: {{ $v.vault.namespace | quote }}
{{- end }}
{{- $used := include "carnet.usedSecretNames" . | fromJsonArray -}}
{{- range $name, $s := $v.secrets.vaultAgent.secrets }}
{{- if has $name $used }}
vault.hashicorp.com/agent-inject-secret-{{ $name }}: {{ $s.path | quote }}
vault.hashicorp.com/agent-inject-template-{{ $name }}: {{ printf "{{- with secret %q -}}{{ .Data.data.%s }}{{- end -}}" $s.path $s.field | quote }}
{{- end }}
{{- end }}
{{- with $v.secrets.vaultAgent.annotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}
{{- end -}}

{{- define "carnet.secretProviderClassName" -}}
{{- printf "%s-vault" (include "carnet.fullname" .) -}}
{{- end -}}

{{/* The volumes every Carnet pod mounts; dict "ctx" $ "hook" bool (a pre-install hook runs before the
chart's claims exist: emptyDirs then, and the hook's own SecretProviderClass). */}}
{{- define "carnet.volumes" -}}
{{- $ctx := .ctx -}}
{{- $v := $ctx.Values -}}
{{- $fullname := include "carnet.fullname" $ctx -}}
- name: tmp
  emptyDir:
    sizeLimit: 512Mi
- name: tls
  projected:
    defaultMode: 288
    sources:
{{- range $file, $src := include "carnet.tlsFiles" $ctx | fromJson }}
      - {{ $src.kind }}:
          name: {{ $src.name }}
          items:
            - key: {{ $src.key }}
              path: {{ $file }}
{{- end }}
- name: data
{{- if and (include "carnet.embedded" $ctx) (not .hook) }}
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-data" $fullname) $v.persistence.data.existingClaim }}
{{- else }}
  emptyDir:
    sizeLimit: 1Gi
{{- end }}
- name: keys
{{- if .hook }}
  emptyDir:
    sizeLimit: 64Mi
{{- else }}
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-keys" $fullname) $v.persistence.keys.existingClaim }}
{{- end }}
{{- if and (include "carnet.backupVolume" $ctx) (not .hook) }}
- name: backups
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-backups" $fullname) $v.persistence.backups.existingClaim }}
{{- end }}
{{- if eq $v.secrets.provider "csi" }}
- name: secrets
  csi:
    driver: secrets-store.csi.k8s.io
    readOnly: true
    volumeAttributes:
      secretProviderClass: {{ include "carnet.secretProviderClassName" $ctx }}{{ if .hook }}-migrate{{ end }}
{{- end }}
{{- end -}}

{{/* "true" when something writes backups to the backups volume. */}}
{{- define "carnet.backupVolume" -}}
{{- if .Values.backup.enabled -}}true{{- end -}}
{{- end -}}

{{/* dict "ctx" $ "hook" bool */}}
{{- define "carnet.volumeMounts" -}}
{{- $v := .ctx.Values -}}
- name: tmp
  mountPath: /tmp
- name: tls
  mountPath: /etc/carnet/tls
  readOnly: true
- name: data
  mountPath: /var/lib/carnet/data
- name: keys
  mountPath: /var/lib/carnet/keys
{{- if and (include "carnet.backupVolume" .ctx) (not .hook) }}
- name: backups
  mountPath: /var/lib/carnet/backups
{{- end }}
{{- if eq $v.secrets.provider "csi" }}
- name: secrets
  mountPath: /run/secrets/carnet
  readOnly: true
{{- end }}
{{- end -}}

{{/* Pod-level settings shared by every Carnet pod; dict "ctx" $ "component" "api" */}}
{{- define "carnet.podMeta" -}}
{{- $annotations := merge (dict) (include "carnet.secretAnnotations" .ctx | fromYaml) (dict "checksum/settings" (include "carnet.settings" .ctx | sha256sum)) (default (dict) .annotations) -}}
metadata:
  labels:
    {{- include "carnet.labels" . | nindent 4 }}
    {{- with .labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    {{- toYaml $annotations | nindent 4 }}
{{- end -}}

{{- define "carnet.podCommon" -}}
serviceAccountName: {{ include "carnet.serviceAccountName" . }}
automountServiceAccountToken: {{ include "carnet.automountToken" . }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* Vault's Kubernetes auth and the Vault Agent read the service-account token; nothing else does. */}}
{{- define "carnet.automountToken" -}}
{{- $links := include "carnet.links" . | fromJson -}}
{{- if or (and (hasKey $links "vault") (eq .Values.vault.auth "kubernetes")) (eq .Values.secrets.provider "vaultAgent") -}}
true
{{- else -}}
false
{{- end -}}
{{- end -}}

{{/* A Carnet container; dict "ctx" $ "name" "api" "args" (list ...) "resources" {...} ["hook" true: settings
inline, the ConfigMap does not exist yet before install] */}}
{{- define "carnet.container" -}}
{{- $ctx := .ctx -}}
- name: {{ .name }}
  image: {{ include "carnet.image" $ctx }}
  imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
  command: {{ include "carnet.command" $ctx }}
  args: {{ toJson .args }}
  {{- if .hook }}
  env:
    {{- range $name, $value := include "carnet.settings" $ctx | fromYaml }}
    - name: {{ $name }}
      value: {{ $value | quote }}
    {{- end }}
    {{- with include "carnet.secretEnv" $ctx | trim }}
    {{- . | nindent 4 }}
    {{- end }}
  {{- else }}
  envFrom:
    - configMapRef:
        name: {{ include "carnet.fullname" $ctx }}-settings
  {{- with include "carnet.secretEnv" $ctx | trim }}
  env:
    {{- . | nindent 4 }}
  {{- end }}
  {{- end }}
  securityContext:
    {{- toYaml $ctx.Values.containerSecurityContext | nindent 4 }}
  resources:
    {{- toYaml .resources | nindent 4 }}
  volumeMounts:
    {{- include "carnet.volumeMounts" (dict "ctx" $ctx "hook" .hook) | nindent 4 }}
{{- end -}}
