{{/* The replicator's checkpoint: "pvc", "uri" or "emptyDir". */}}
{{- define "kjournal.replicator.checkpointKind" -}}
{{- $checkpoint := .Values.replicator.checkpoint -}}
{{- if $checkpoint.uri -}}uri{{- else if $checkpoint.persistence.enabled -}}pvc{{- else -}}emptyDir{{- end -}}
{{- end -}}

{{- define "kjournal.replicator.checkpointLocation" -}}
{{- if .Values.replicator.checkpoint.uri -}}
{{- .Values.replicator.checkpoint.uri -}}
{{- else -}}
/var/lib/kjournal/checkpoint
{{- end -}}
{{- end -}}

{{/* The Spark conf the chart sets for Spark on Kubernetes (client-mode driver in its pod).
disableConfigMap: executors run the driver's image, so they have its conf files already; the
ConfigMap Spark would make for them was created after the first executor and showed up as a
FailedMount event on every new executor. */}}
{{- define "kjournal.replicator.kubernetesConf" -}}
{{- $root := . -}}
{{- $values := .Values.replicator -}}
{{- $name := include "kjournal.componentName" (dict "root" $root "component" "replicator") -}}
{{- $conf := dict
  "spark.kubernetes.namespace" $root.Release.Namespace
  "spark.kubernetes.container.image" (include "kjournal.image" (dict "root" $root "component" "replicator"))
  "spark.kubernetes.container.image.pullPolicy" $root.Values.image.pullPolicy
  "spark.kubernetes.driver.pod.name" "$(POD_NAME)"
  "spark.kubernetes.executor.podNamePrefix" $name
  "spark.kubernetes.executor.podTemplateFile" "/etc/kjournal/spark/executor-pod.yaml"
  "spark.kubernetes.executor.podTemplateContainerName" "executor"
  "spark.kubernetes.executor.disableConfigMap" "true"
  "spark.driver.host" (printf "%s-driver.%s.svc" $name $root.Release.Namespace)
  "spark.driver.bindAddress" "0.0.0.0"
  "spark.driver.port" "7078"
  "spark.blockManager.port" "7079"
  "spark.driver.memory" $values.driver.memory
  "spark.executor.instances" (toString $values.executors.instances)
  "spark.executor.cores" (toString $values.executors.cores)
  "spark.executor.memory" $values.executors.memory
  "spark.kubernetes.executor.request.cores" (toString $values.executors.requestCores)
-}}
{{- if $values.executors.limitCores -}}
{{- $_ := set $conf "spark.kubernetes.executor.limit.cores" (toString $values.executors.limitCores) -}}
{{- end -}}
{{- with $root.Values.imagePullSecrets -}}
{{- $names := list -}}
{{- range . }}{{- $names = append $names .name -}}{{- end -}}
{{- $_ := set $conf "spark.kubernetes.container.image.pullSecrets" (join "," $names) -}}
{{- end -}}
{{- toJson $conf -}}
{{- end -}}

{{/* KJOURNAL_SPARK__CONF: the chart's entries, then replicator.settings.spark.conf over them. */}}
{{- define "kjournal.replicator.sparkConf" -}}
{{- $conf := dict -}}
{{- if eq .Values.replicator.mode "kubernetes" -}}
{{- $conf = include "kjournal.replicator.kubernetesConf" . | fromJson -}}
{{- end -}}
{{- $user := dig "spark" "conf" dict (.Values.replicator.settings | default dict) -}}
{{- toJson (mergeOverwrite $conf $user) -}}
{{- end -}}

{{/* The replicator's own env, whatever runs it. */}}
{{- define "kjournal.replicator.env" -}}
{{- $ctx := dict "root" . "component" "replicator" -}}
- name: KJOURNAL_HTTP__HOST
  value: "0.0.0.0"
- name: KJOURNAL_HTTP__PORT
  value: "9400"
- name: KJOURNAL_HTTP__ENABLED
  value: "true"
- name: KJOURNAL_SPARK__CHECKPOINT_LOCATION
  value: {{ include "kjournal.replicator.checkpointLocation" . | quote }}
{{- include "kjournal.settingsEnv" $ctx }}
{{- include "kjournal.kafkaSecretEnv" $ctx }}
{{- include "kjournal.cassandraSecretEnv" $ctx }}
{{- include "kjournal.otlpEnv" $ctx }}
{{- with .Values.replicator.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}
