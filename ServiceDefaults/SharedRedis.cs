using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults;

/// <summary>
/// The one Redis connection of a service (<c>ConnectionStrings:flags</c>, as Aspire's <c>AddRedis("flags")</c> and
/// <c>WithReference</c> give it): the flags, and the uploads quota shared by Uploads.Api replicas. StackExchange.Redis
/// multiplexes every call over it and reconnects by itself; <c>AbortOnConnectFail=false</c> lets a service start,
/// and keep serving, while Redis is out of reach.
/// </summary>
public sealed class SharedRedis : IDisposable
{
    public const string ConnectionName = "flags";

    private SharedRedis(ConnectionMultiplexer connection) => Connection = connection;

    public ConnectionMultiplexer Connection { get; }

    public IDatabase Database => Connection.GetDatabase();

    public bool IsConnected => Connection.IsConnected;

    public static SharedRedis Connect(string connectionString)
    {
        var options = ConfigurationOptions.Parse(connectionString);
        options.AbortOnConnectFail = false;
        // Fail a call fast while Redis is away (the default waits 5 s); the flags already loaded stay in force.
        options.ConnectTimeout = 2_000;
        options.SyncTimeout = options.AsyncTimeout = 2_000;
        options.ReconnectRetryPolicy = new ExponentialRetry(deltaBackOffMilliseconds: 250, maxDeltaBackOffMilliseconds: 2_000);
        return new SharedRedis(ConnectionMultiplexer.Connect(options));
    }

    public void Dispose() => Connection.Dispose();
}
