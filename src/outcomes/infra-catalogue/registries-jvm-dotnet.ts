/**
 * Maven Central, the Gradle plugin portal and distribution, and nuget.org
 * answering 5xx or dropping the connection, as Maven, Gradle and NuGet print
 * it. "Could not find artifact", a 401/403, and warnings the build went past
 * are not here.
 */
import type { InfraFamily } from "./family.js";

export const JVM_DOTNET_FAMILIES: readonly InfraFamily[] = [
  // Maven (maven-resolver): ArtifactTransferException "Could not transfer artifact {artifact} from/to {repo}
  // ({url}): {cause}", the cause being the transport's ("status code: 503, reason phrase: …", "HTTP Status:
  // 503"), wagon's ("Failed to transfer file {url} with status code {code}", "… Return code is: {code} ,
  // ReasonPhrase:…", "Transfer failed for {url} {code} …"), or the socket's "Connection reset", "… timed out".
  // A [WARNING] (an optional download, cached metadata) is not the failure.
  // https://github.com/apache/maven-resolver (maven-resolver-api: aether/transfer/ArtifactTransferException.java)
  // https://github.com/apache/linkis/issues/1816 · https://github.com/snowflakedb/snowflake-ingest-java/pull/502
  // https://github.com/apache/pulsar/issues/6231 · https://github.com/HiromuHota/pentaho-kettle/issues/270
  {
    family: "maven",
    description: "Maven Central (or a Maven repository) answered 5xx or dropped the connection",
    scope: "tool",
    patterns: [
      new RegExp(
        String.raw`^(?!\[WARNING\])(?:.*?: )?Could not transfer artifact \S+ from/to \S+ \(https?://[^)\s]+\): ` +
          String.raw`(?:status code: 5\d\d|HTTP Status: 5\d\d|Failed to transfer file:? \S+ (?:with status code|` +
          String.raw`Return code is:) 5\d\d|[Tt]ransfer failed for \S+(?: 5\d\d|: (?:Connection reset|` +
          String.raw`Connection timed out|Read timed out|Connect timed out))|Connection reset|Read timed out|` +
          String.raw`Connect timed out)\b`,
      ),
    ],
    samples: [
      "Error:  Failed to execute goal on project linkis-engineconn-manager-server: Could not resolve dependencies " +
        "for project org.apache.linkis:linkis-engineconn-manager-server:jar:1.1.0: Could not transfer artifact " +
        "net.java.dev.jna:jna-platform:jar:5.6.0 from/to central (https://repo.maven.apache.org/maven2): " +
        "transfer failed for https://repo.maven.apache.org/maven2/net/java/dev/jna/jna-platform/5.6.0/" +
        "jna-platform-5.6.0.jar: Connection timed out (Read failed) -> [Help 1]",
      "2023-05-17T14:20:16.7749209Z [ERROR] Failed to execute goal org.apache.maven.plugins:maven-dependency-" +
        "plugin:3.3.0:analyze-only (analyze) on project snowflake-ingest-sdk: Execution analyze of goal " +
        "org.apache.maven.plugins:maven-dependency-plugin:3.3.0:analyze-only failed: Plugin org.apache.maven." +
        "plugins:maven-dependency-plugin:3.3.0 or one of its dependencies could not be resolved: Failed to collect " +
        "dependencies at org.apache.maven.plugins:maven-dependency-plugin:jar:3.3.0 -> org.apache.maven.reporting:" +
        "maven-reporting-impl:jar:3.1.0: Failed to read artifact descriptor for org.apache.maven.reporting:" +
        "maven-reporting-impl:jar:3.1.0: Could not transfer artifact org.apache.maven.reporting:maven-reporting-" +
        "impl:pom:3.1.0 from/to central (https://repo.maven.apache.org/maven2): Connection reset -> [Help 1]",
      "[ERROR] Failed to execute goal on project buildtools: Could not resolve dependencies for project " +
        "org.apache.pulsar:buildtools:jar:2.6.0-SNAPSHOT: Could not transfer artifact org.apache-extras.beanshell:" +
        "bsh:jar:2.0b6 from/to central (https://repo.maven.apache.org/maven2): Transfer failed for " +
        "https://repo.maven.apache.org/maven2/org/apache-extras/beanshell/bsh/2.0b6/bsh-2.0b6.jar 503 between " +
        "bytes timeout -> [Help 1]",
      "[ERROR] Failed to execute goal on project pulsar-presto-distribution: Could not resolve dependencies for " +
        "project org.apache.pulsar:pulsar-presto-distribution:jar:2.6.0-SNAPSHOT: Could not transfer artifact " +
        "org.eclipse.jetty:jetty-io:jar:9.4.11.v20180605 from/to central (https://repo.maven.apache.org/maven2): " +
        "Failed to transfer file https://repo.maven.apache.org/maven2/org/eclipse/jetty/jetty-io/9.4.11.v20180605/" +
        "jetty-io-9.4.11.v20180605.jar with status code 500 -> [Help 1]",
      "Caused by: org.eclipse.aether.transfer.ArtifactTransferException: Could not transfer artifact " +
        "org.pentaho:pentaho-ce-jar-parent-pom:pom:9.0.0.0-423 from/to pentaho-public " +
        "(https://repo.orl.eng.hitachivantara.com/artifactory/pnt-mvn/): Failed to transfer file: " +
        "https://repo.orl.eng.hitachivantara.com/artifactory/pnt-mvn/org/pentaho/pentaho-ce-jar-parent-pom/" +
        "9.0.0.0-423/pentaho-ce-jar-parent-pom-9.0.0.0-423.pom. Return code is: 503 , ReasonPhrase:Service " +
        "Unavailable.",
    ],
    counterparts: [
      // ArtifactNotFoundException ("Could not find artifact … in …"): the coordinates are wrong.
      "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project " +
        "com.example:app:jar:1.0: Could not find artifact com.example:missing:jar:1.0 in central " +
        "(https://repo.maven.apache.org/maven2) -> [Help 1]",
      // https://github.com/travis-ci/travis-ci/issues/10055 (the reporter wrapped it): refused, 403.
      "Could not transfer artifact org.apache.maven.plugins:maven-enforcer-plugin:pom:3.0.0-M1 from/to central " +
        "(https://repo.maven.apache.org/maven2): Access denied to: https://repo.maven.apache.org/maven2/org/apache/" +
        "maven/plugins/maven-enforcer-plugin/3.0.0-M1/maven-enforcer-plugin-3.0.0-M1.pom , ReasonPhrase:Forbidden.",
      // https://github.com/travis-ci/travis-ci/issues/9990: a warning; Maven went on with the cached metadata.
      "[WARNING] Could not transfer metadata org.codehaus.mojo/maven-metadata.xml from/to central " +
        "(https://repo.maven.apache.org/maven2): Connect to repo.maven.apache.org:443 " +
        "[repo.maven.apache.org/151.101.184.215] failed: Connection timed out (Connection timed out)",
      "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in " +
        "com.example.MirrorClientTest\n[ERROR] retriesOn503(com.example.MirrorClientTest)  Time elapsed: 0.01 s  " +
        "<<< FAILURE!\njava.lang.AssertionError: Could not transfer artifact com.example:a:jar:1 from/to central " +
        "(https://repo.maven.apache.org/maven2): status code: 503, reason phrase: Service Unavailable (503)",
    ],
  },
  // Gradle: HttpErrorStatusCodeException "Could not {method} '{url}'. Received status code {code} from server:
  // {reason}", and the failure tree's "> Read timed out" under "Could not GET '…'."; the wrapper downloading
  // its distribution through java.net.HttpURLConnection ("Server returned HTTP response code: {code} for URL").
  // https://github.com/apache/grails-core/issues/9737 · https://github.com/nexusnode/crafting-dead/issues/325
  // https://github.com/mplushnikov/lombok-intellij-plugin/issues/1102
  // https://github.com/travis-ci/travis-ci/issues/9059 · https://github.com/servo/servo/issues/34600
  {
    family: "gradle",
    description: "a Gradle repository, the plugin portal or the distribution server answered 5xx or timed out",
    scope: "tool",
    patterns: [
      new RegExp(
        String.raw`^(?:> )?(?:Caused by: org\.gradle\.internal\.resource\.transport\.http\.` +
          String.raw`HttpErrorStatusCodeException: )?Could not (?:GET|HEAD|PUT) '[^']+'\. ` +
          String.raw`Received status code 5\d\d from server\b`,
      ),
      /^> Read timed out$/,
      new RegExp(
        String.raw`^Exception in thread "main" (?:java\.lang\.RuntimeException: )?java\.io\.IOException: ` +
          String.raw`Server returned HTTP response code: 5\d\d for URL: https?://\S+/gradle-[\w.-]+-(?:bin|all)\.zip$`,
      ),
    ],
    samples: [
      "         > Could not GET 'https://repo.grails.org/grails/core/com/moowork/gradle/gradle-node-plugin/0.11/" +
        "gradle-node-plugin-0.11.jar'. Received status code 503 from server: Service Unavailable: Back-end server " +
        "is at capacity",
      "            > Could not GET 'https://maven.tarbits.co.uk/releases/cpw/mods/bootstraplauncher/1.0.0/" +
        "bootstraplauncher-1.0.0.pom'. Received status code 502 from server: Bad Gateway",
      "Caused by: org.gradle.internal.resource.transport.http.HttpErrorStatusCodeException: Could not HEAD " +
        "'https://jetbrains.bintray.com/intellij-third-party-dependencies/com/jetbrains/intellij/idea/ideaIC/" +
        "2019.3.3/ideaIC-2019.3.3.pom'. Received status code 502 from server: Bad Gateway",
      "               > Read timed out",
      'Error: Exception in thread "main" java.io.IOException: Server returned HTTP response code: 503 for URL: ' +
        "https://github.com/gradle/gradle-distributions/releases/download/v8.9.0/gradle-8.9-bin.zip",
    ],
    counterparts: [
      // https://github.com/hibernate/hibernate-metamodelgen/pull/13: an http:// distribution URL, refused.
      'Exception in thread "main" java.io.IOException: Server returned HTTP response code: 403 for URL: ' +
        "http://services.gradle.org/distributions/gradle-1.7-bin.zip",
      "   > Could not find com.example:missing:1.0.\n     Required by:\n         project :app",
      "MirrorClientTest > retriesOn503FromRegistry() FAILED\n    java.lang.AssertionError at MirrorClientTest.java:42",
    ],
  },
  // NuGet: restore's NU1301 (and the older "error :") when it could not load nuget.org's service index or a
  // package's versions. Only nuget.org itself: for a private feed NU1301 usually means missing credentials.
  // NU1801 is the warning restore went past, and "The HTTP request … has timed out" alone is a retry.
  // https://learn.microsoft.com/en-us/nuget/reference/errors-and-warnings/nu1301
  // https://github.com/MicrosoftDocs/mslearn-dotnet-kubernetes/issues/4 (BuildKit's "#11 10.82 " precedes it)
  // https://github.com/NuGet/Home/issues/11995 · https://github.com/dotnet/runtime/issues/35074
  {
    family: "nuget",
    description: "nuget.org could not be reached or did not answer during restore",
    scope: "tool",
    patterns: [
      new RegExp(
        String.raw`^(?:\S.*: )?error (?:NU1301)?: (?:Unable to load the service index for source ` +
          String.raw`https://api\.nuget\.org/v3/index\.json\.?|Failed to retrieve information about '[^']+' from ` +
          String.raw`remote source 'https://api\.nuget\.org/[^']*'\.?)(?: \[[^\]]*\])?$`,
      ),
    ],
    samples: [
      "/src/backend.csproj : error NU1301: Unable to load the service index for source " +
        "https://api.nuget.org/v3/index.json.",
      "/home/christian/dev/csharp/test/test.csproj : error NU1301: Unable to load the service index for source " +
        "https://api.nuget.org/v3/index.json.",
      "/Users/runner/runners/2.166.2/work/1/s/.dotnet/sdk/5.0.100-preview.2.20165.1/NuGet.targets(128,5): error : " +
        "Failed to retrieve information about 'Microsoft.CodeAnalysis.Common' from remote source " +
        "'https://api.nuget.org/v3-flatcontainer/microsoft.codeanalysis.common/index.json'. " +
        "[/Users/runner/runners/2.166.2/work/1/s/Scaffolding.sln]",
    ],
    counterparts: [
      "/src/app.csproj : error NU1301: Unable to load the service index for source " +
        "https://nuget.pkg.github.com/example/index.json.",
      "/src/app.csproj : warning NU1801: Unable to load the service index for source " +
        "https://api.nuget.org/v3/index.json.",
      // https://github.com/dotnet/runtime/issues/35074: NuGet retrying the request.
      "  Retrying 'FindPackagesByIdAsync' for source " +
        "'https://api.nuget.org/v3-flatcontainer/microsoft.codeanalysis.common/index.json'.\n" +
        "  The HTTP request to 'GET https://api.nuget.org/v3-flatcontainer/microsoft.codeanalysis.common/" +
        "index.json' has timed out after 100000ms.",
      "/src/app.csproj : error NU1101: Unable to find package Newtonsoft.Jsonn. No packages exist with this id " +
        "in source(s): nuget.org",
      "  Failed NuGetMirror.Tests.RetriesOn503 [12 ms]\n" +
        "Failed!  - Failed:     1, Passed:    41, Skipped:     0, Total:    42, Duration: 1 s - NuGetMirror.Tests.dll",
    ],
  },
];
