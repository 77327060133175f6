# The Aspire dashboard as a service of the swarm stack, from the dashboard package the AppHost already restores
# (Aspire.Dashboard.Sdk.linux-x64: its tools/ folder is the context), on the services' own base image. eng/swarm/swarm.sh builds it.
ARG BASE
FROM ${BASE}
COPY . /app
# NuGet leaves the package's files without their execute bit.
RUN chmod 755 /app/Aspire.Dashboard
USER 1654
WORKDIR /app
ENTRYPOINT ["/app/Aspire.Dashboard"]
