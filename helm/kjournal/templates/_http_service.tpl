{{/*
The writer's and the reader's objects (Deployment, Service, PodDisruptionBudget, optional
HorizontalPodAutoscaler): (dict "root" $ "component" "writer" "cassandra" false)
*/}}
{{- define "kjournal.httpService" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- $values := index $root.Values $component -}}
{{- $name := include "kjournal.componentName" . -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name }}
  labels:
    {{- include "kjournal.labels" . | nindent 4 }}
spec:
  {{- if not $values.autoscaling.enabled }}
  replicas: {{ $values.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 0, maxSurge: 1}
  selector:
    matchLabels:
      {{- include "kjournal.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "kjournal.selectorLabels" . | nindent 8 }}
        {{- with $values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- /* a changed setting rolls the pods even where only the env changed */}}
        kjournal.dev/settings: {{ include "kjournal.settingsEnv" . | sha256sum | trunc 16 }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      automountServiceAccountToken: false
      enableServiceLinks: false
      {{- with include "kjournal.imagePullSecrets" $root | trim }}{{ . | nindent 6 }}{{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: 45
      containers:
        - name: {{ $component }}
          image: {{ include "kjournal.image" . | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          env:
            - name: KJOURNAL_HTTP__HOST
              value: "0.0.0.0"
            - name: KJOURNAL_HTTP__PORT
              value: "8080"
            {{- if eq .component "writer" }}
            # Each append's outcome comes from the reader before the writer answers it.
            - name: KJOURNAL_READER__URL
              value: {{ printf "http://%s:%v" (include "kjournal.componentName" (dict "root" .root "component" "reader")) .root.Values.reader.service.port | quote }}
            {{- end }}
            {{- with include "kjournal.settingsEnv" . | trim }}{{ . | nindent 12 }}{{- end }}
            {{- with include "kjournal.kafkaSecretEnv" . | trim }}{{ . | nindent 12 }}{{- end }}
            {{- if .cassandra }}
            {{- with include "kjournal.cassandraSecretEnv" . | trim }}{{ . | nindent 12 }}{{- end }}
            {{- end }}
            {{- with include "kjournal.authEnv" . | trim }}{{ . | nindent 12 }}{{- end }}
            {{- with include "kjournal.otlpEnv" . | trim }}{{ . | nindent 12 }}{{- end }}
            {{- with $values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - {name: http, containerPort: 8080, protocol: TCP}
          lifecycle:
            # Serve on while the endpoints controller and kube-proxy stop sending new connections
            # here; then SIGTERM drains what is in flight (KJOURNAL_HTTP__GRACEFUL_SHUTDOWN_S).
            preStop:
              exec: {command: [sleep, {{ $values.preStopSleepSeconds | quote }}]}
          startupProbe:
            httpGet: {path: /healthz, port: http}
            periodSeconds: 2
            failureThreshold: 60
          livenessProbe:
            httpGet: {path: /healthz, port: http}
            periodSeconds: 10
            timeoutSeconds: 5
            failureThreshold: 6
          readinessProbe:
            httpGet: {path: /readyz, port: http}
            initialDelaySeconds: {{ $values.readinessDelaySeconds }}
            periodSeconds: 5
            timeoutSeconds: 5
            failureThreshold: 2
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - {name: tmp, mountPath: /tmp}
            {{- with include "kjournal.authVolumeMount" . | trim }}{{ . | nindent 12 }}{{- end }}
            {{- with $values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: {}
        {{- with include "kjournal.authVolume" . | trim }}{{ . | nindent 8 }}{{- end }}
        {{- with $values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $name }}
  labels:
    {{- include "kjournal.labels" . | nindent 4 }}
spec:
  type: {{ $values.service.type }}
  selector:
    {{- include "kjournal.selectorLabels" . | nindent 4 }}
  ports:
    - {name: http, port: {{ $values.service.port }}, targetPort: http, protocol: TCP}
{{- if $values.podDisruptionBudget.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $name }}
  labels:
    {{- include "kjournal.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ $values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "kjournal.selectorLabels" . | nindent 6 }}
{{- end }}
{{- if $values.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $name }}
  labels:
    {{- include "kjournal.labels" . | nindent 4 }}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: {{ $name }}}
  minReplicas: {{ $values.autoscaling.minReplicas }}
  maxReplicas: {{ $values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: {type: Utilization, averageUtilization: {{ $values.autoscaling.targetCPUUtilizationPercentage }}}
{{- end }}
{{- end -}}
