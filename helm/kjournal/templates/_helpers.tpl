{{/* Names and labels. */}}
{{- define "kjournal.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kjournal.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The name of one component's objects: (dict "root" $ "component" "writer") */}}
{{- define "kjournal.componentName" -}}
{{- printf "%s-%s" (include "kjournal.fullname" .root) .component -}}
{{- end -}}

{{- define "kjournal.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kjournal.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "kjournal.labels" -}}
{{ include "kjournal.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: kjournal
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* A component's image: (dict "root" $ "component" "writer") */}}
{{- define "kjournal.image" -}}
{{- $image := .root.Values.image -}}
{{- $repository := index $image.repositories .component -}}
{{- $tag := index ($image.tags | default dict) .component | default $image.tag | default .root.Chart.AppVersion -}}
{{- if $image.registry -}}
{{- printf "%s/%s:%s" $image.registry $repository $tag -}}
{{- else -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}
{{- end -}}

{{/*
One settings value as its variable's text: whole numbers without an exponent (YAML numbers arrive
as floats), lists joined by commas, maps as JSON.
*/}}
{{- define "kjournal.settingText" -}}
{{- $value := .value -}}
{{- if eq .kind "json" -}}
{{- toJson $value -}}
{{- else if and (eq .kind "list") (kindIs "slice" $value) -}}
{{- join "," $value -}}
{{- else if and (kindIs "float64" $value) (eq $value (floor $value)) -}}
{{- int64 $value -}}
{{- else -}}
{{- $value -}}
{{- end -}}
{{- end -}}

{{/*
A component's KJOURNAL_* settings as env entries: the shared sections of `.Values.settings` under
the component's own `settings`, rendered for each variable files/settings.json lists for it
(generated from the settings classes by `kjournal-dev chart-values`).
(dict "root" $ "component" "reader")
*/}}
{{- define "kjournal.mergedSettings" -}}
{{- $own := index .root.Values .component -}}
{{- $shared := pick (.root.Values.settings | default dict) "kafka" "cassandra" "auth" -}}
{{- mergeOverwrite (deepCopy $shared) (deepCopy ($own.settings | default dict)) | toJson -}}
{{- end -}}

{{- define "kjournal.settingsEnv" -}}
{{- $root := .root -}}
{{- $own := index $root.Values .component -}}
{{- $settings := include "kjournal.mergedSettings" . | fromJson -}}
{{- $table := $root.Files.Get "files/settings.json" | fromJson -}}
{{- range $variable := index $table .component }}
{{- $current := $settings -}}
{{- $found := true -}}
{{- range $key := $variable.path -}}
{{- if and $found (kindIs "map" $current) (hasKey $current $key) -}}
{{- $current = index $current $key -}}
{{- else -}}
{{- $found = false -}}
{{- end -}}
{{- end -}}
{{- if and $found (not (kindIs "invalid" $current)) }}
- name: {{ $variable.env }}
  value: {{ include "kjournal.settingText" (dict "kind" $variable.kind "value" $current) | quote }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* SASL credentials from kafka.existingSecret. (dict "root" $) */}}
{{- define "kjournal.kafkaSecretEnv" -}}
{{- with .root.Values.kafka.existingSecret -}}
{{- if .name }}
- name: KJOURNAL_KAFKA__SASL_USERNAME
  valueFrom: {secretKeyRef: {name: {{ .name | quote }}, key: {{ .usernameKey | quote }}}}
- name: KJOURNAL_KAFKA__SASL_PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .name | quote }}, key: {{ .passwordKey | quote }}}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's Cassandra role from its cassandraSecret. (dict "root" $ "component" "reader") */}}
{{- define "kjournal.cassandraSecretEnv" -}}
{{- with (index .root.Values .component).cassandraSecret -}}
{{- if .name }}
- name: KJOURNAL_CASSANDRA__USERNAME
  valueFrom: {secretKeyRef: {name: {{ .name | quote }}, key: {{ .usernameKey | quote }}}}
- name: KJOURNAL_CASSANDRA__PASSWORD
  valueFrom: {secretKeyRef: {name: {{ .name | quote }}, key: {{ .passwordKey | quote }}}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Bearer-token auth of the writer or the reader: the JWKS file from auth.jwksSecret, and the checks
helm can make before a pod would refuse to start. (dict "root" $ "component" "writer")
*/}}
{{- define "kjournal.authEnabled" -}}
{{- $auth := (include "kjournal.mergedSettings" . | fromJson).auth | default dict -}}
{{- if $auth.enabled -}}true{{- end -}}
{{- end -}}

{{- define "kjournal.authEnv" -}}
{{- $auth := (include "kjournal.mergedSettings" . | fromJson).auth | default dict -}}
{{- $secret := .root.Values.auth.jwksSecret -}}
{{- if $auth.enabled -}}
{{- if and $secret.name $auth.jwks_url -}}
{{- fail (printf "%s: set either auth.jwksSecret.name or settings.auth.jwks_url, not both" .component) -}}
{{- end -}}
{{- if not (or $secret.name $auth.jwks_url) -}}
{{- fail (printf "%s: settings.auth.enabled needs the issuer's keys: auth.jwksSecret.name (a Secret holding a JWKS) or settings.auth.jwks_url" .component) -}}
{{- end -}}
{{- if not (and $auth.issuer $auth.audience) -}}
{{- fail (printf "%s: settings.auth.enabled needs settings.auth.issuer and settings.auth.audience" .component) -}}
{{- end -}}
{{- end -}}
{{- if $secret.name }}
- name: KJOURNAL_AUTH__JWKS_FILE
  value: {{ printf "/etc/kjournal/auth/%s" $secret.key | quote }}
{{- end -}}
{{- end -}}

{{/* The JWKS Secret's volume (mounted whole, not by subPath, so a rotated key reaches the pod). */}}
{{- define "kjournal.authVolume" -}}
{{- with .root.Values.auth.jwksSecret.name }}
- name: jwks
  secret: {secretName: {{ . | quote }}}
{{- end -}}
{{- end -}}

{{- define "kjournal.authVolumeMount" -}}
{{- if .root.Values.auth.jwksSecret.name }}
- {name: jwks, mountPath: /etc/kjournal/auth, readOnly: true}
{{- end -}}
{{- end -}}

{{/* OpenTelemetry variables: the OTLP/HTTP endpoint traces go to, or tracing off (the SDK's
default endpoint, localhost, has no collector in a pod). (dict "root" $ "component" "writer") */}}
{{- define "kjournal.otlpEnv" -}}
{{- if .root.Values.otlp.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .root.Values.otlp.endpoint | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "kjournal-%s" .component | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .root.Values.otlp.sampler | quote }}
{{- if contains "traceidratio" .root.Values.otlp.sampler }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ .root.Values.otlp.samplerArg | quote }}
{{- end }}
{{- else }}
- name: OTEL_SDK_DISABLED
  value: "true"
{{- end -}}
{{- end -}}

{{- define "kjournal.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/* NetworkPolicy egress rule to `to` peers on `ports`: (dict "rule" .Values.networkPolicy.kafka) */}}
{{- define "kjournal.egressRule" -}}
- ports:
{{- toYaml .rule.ports | nindent 4 }}
{{- with .rule.to }}
  to:
{{- toYaml . | nindent 4 }}
{{- end }}
{{- end -}}
